// SPDX-License-Identifier: MIT
#include "heapkit/growth/series_order.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace heapkit {
namespace {

bool remove_suffix(std::string_view& text, std::string_view suffix) {
    if (text.size() < suffix.size() || text.substr(text.size() - suffix.size()) != suffix) {
        return false;
    }
    text.remove_suffix(suffix.size());
    return true;
}

// The last '.'-separated field of `text`, removed from it with its dot.
std::string_view take_field(std::string_view& text) {
    size_t dot = text.rfind('.');
    if (dot == std::string_view::npos) {
        std::string_view field = text;
        text = {};
        return field;
    }
    std::string_view field = text.substr(dot + 1);
    text = text.substr(0, dot);
    return field;
}

std::optional<uint64_t> number(std::string_view digits) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
        return std::nullopt;
    }
    return value;
}

// "f", or one of i, m, u followed by digits (jemalloc's), or the peak watcher's triggers
// (libheapkit-runtime's captures: PREFIX.PID.SEQ.peak.heap).
bool is_kind(std::string_view kind) {
    if (kind == "f" || kind == "peak" || kind == "danger" || kind == "demand") {
        return true;
    }
    return kind.size() >= 2 && (kind[0] == 'i' || kind[0] == 'm' || kind[0] == 'u') &&
           number(kind.substr(1)).has_value();
}

} // namespace

std::optional<DumpName> parse_dump_name(std::string_view path) {
    std::string_view name =
        path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
    remove_suffix(name, ".gz");
    if (!remove_suffix(name, ".heap")) {
        return std::nullopt;
    }
    std::string_view kind = take_field(name);
    if (!is_kind(kind)) {
        return std::nullopt;
    }
    auto seq = number(take_field(name));
    auto pid = number(take_field(name));
    if (!seq || !pid || name.empty()) {
        return std::nullopt; // the prefix may hold dots, but it must be there
    }
    return DumpName{*pid, *seq, std::string(kind), std::string(name)};
}

DumpStamp stamp_of(const Profile& dump) {
    DumpStamp stamp;
    stamp.time_nanos = dump.time_nanos;
    if (!dump.sources.empty()) {
        stamp.name = parse_dump_name(dump.sources.front());
    }
    for (const Module& module : dump.modules) {
        if (module.is_main) {
            stamp.main_start = module.start;
            break;
        }
    }
    return stamp;
}

std::vector<size_t> series_order(std::span<const DumpStamp> stamps) {
    std::vector<size_t> order(stamps.size());
    std::iota(order.begin(), order.end(), size_t{0});
    bool timed = std::all_of(stamps.begin(), stamps.end(),
                             [](const DumpStamp& stamp) { return stamp.time_nanos != 0; });
    if (!timed) {
        return order;
    }
    // Dumps written within one clock tick share a time. Within a process, jemalloc's
    // sequence number says which came first; between processes (one run ending as the
    // next begins), the one that began first did.
    auto process = [&](size_t i) {
        const DumpStamp& stamp = stamps[i];
        return stamp.name         ? std::pair(0, stamp.name->pid)
               : stamp.main_start ? std::pair(1, *stamp.main_start)
                                  : std::pair(2, uint64_t{i});
    };
    std::map<std::pair<int, uint64_t>, int64_t> began;
    for (size_t i = 0; i < stamps.size(); ++i) {
        auto [it, added] = began.try_emplace(process(i), stamps[i].time_nanos);
        it->second = std::min(it->second, stamps[i].time_nanos);
    }
    auto key = [&](size_t i) {
        return std::tuple(stamps[i].time_nanos, began[process(i)], process(i),
                          stamps[i].name ? stamps[i].name->seq : 0);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return key(a) < key(b); });
    return order;
}

std::vector<size_t> run_bounds(std::span<const DumpStamp> ordered) {
    std::vector<size_t> bounds{0};
    for (size_t i = 1; i < ordered.size(); ++i) {
        const DumpStamp& before = ordered[i - 1];
        const DumpStamp& now = ordered[i];
        bool other_pid = before.name && now.name && before.name->pid != now.name->pid;
        bool moved = before.main_start && now.main_start && *before.main_start != *now.main_start;
        if (other_pid || moved) {
            bounds.push_back(i);
        }
    }
    bounds.push_back(ordered.size());
    return bounds;
}

std::vector<ConcurrentProcess> concurrent_processes(std::span<const DumpStamp> ordered,
                                                    std::span<const size_t> bounds) {
    // A process is known by its pid, else by where its program was loaded; dumps known
    // by neither cannot be told apart, and say nothing here.
    auto identity = [&](size_t i) -> std::optional<std::pair<int, uint64_t>> {
        const DumpStamp& stamp = ordered[i];
        if (stamp.name) {
            return std::pair(0, stamp.name->pid);
        }
        if (stamp.main_start) {
            return std::pair(1, *stamp.main_start);
        }
        return std::nullopt;
    };
    std::vector<ConcurrentProcess> processes;
    std::map<std::pair<int, uint64_t>, size_t> index;
    bool returns = false;
    for (size_t run = 0; run + 1 < bounds.size(); ++run) {
        std::set<size_t> seen_in_run;
        for (size_t i = bounds[run]; i < bounds[run + 1]; ++i) {
            auto id = identity(i);
            if (!id) {
                continue;
            }
            auto [it, added] = index.try_emplace(*id, processes.size());
            if (added) {
                ConcurrentProcess process;
                if (id->first == 0) {
                    process.pid = id->second;
                } else {
                    process.main_start = id->second;
                }
                processes.push_back(std::move(process));
            } else if (seen_in_run.count(it->second) == 0) {
                returns = true; // it had dumps before another process's
            }
            seen_in_run.insert(it->second);
            processes[it->second].dumps.push_back(i);
        }
    }
    return returns ? processes : std::vector<ConcurrentProcess>{};
}

} // namespace heapkit
