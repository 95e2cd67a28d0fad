// SPDX-License-Identifier: MIT
#include "heapkit/load/merge_rules.hpp"

#include "heapkit/growth/series_order.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace heapkit {
namespace {

// A shell pattern for the dumps of the process that wrote `source`: its prefix and pid as
// jemalloc names dumps ("jd.4242.*.heap"), else the file itself.
std::string pattern_of(const std::string& source) {
    auto name = parse_dump_name(source);
    if (!name) {
        return source;
    }
    std::string pid = fmt::format(".{}.", name->pid);
    size_t at = source.rfind(pid);
    return at == std::string::npos ? source : source.substr(0, at + pid.size()) + "*.heap";
}

Result<void> check_one_program(std::span<const RawDump> dumps) {
    // Programs in the order met, each with its dumps.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const RawDump*>> by_program;
    for (const RawDump& dump : dumps) {
        std::string program = dump.main_path();
        if (program.empty()) {
            continue; // no maps (a jeprof symbolized file): nothing to tell programs by
        }
        auto [it, inserted] = by_program.try_emplace(program);
        if (inserted) {
            order.push_back(program);
        }
        it->second.push_back(&dump);
    }
    if (order.size() < 2) {
        return {};
    }
    std::vector<std::string> listed;
    for (const std::string& program : order) {
        const auto& of = by_program[program];
        std::set<std::string> patterns;
        for (const RawDump* dump : of) {
            patterns.insert(pattern_of(dump->source));
        }
        std::string shown = *patterns.begin();
        if (patterns.size() > 1) {
            shown += fmt::format(" and {} more", patterns.size() - 1);
        }
        listed.push_back(fmt::format("{} ({} dump{}: {})", program, of.size(),
                                     of.size() == 1 ? "" : "s", shown));
    }
    return fail("these dumps are of {} programs: {}; a profile merges dumps of one program: "
                "give one program's dumps",
                order.size(), fmt::join(listed, ", "));
}

Result<void> check_one_snapshot_per_process(std::span<const RawDump> dumps) {
    std::map<uint64_t, std::vector<const RawDump*>> by_pid;
    for (const RawDump& dump : dumps) {
        if (auto name = parse_dump_name(dump.source)) {
            auto& of = by_pid[name->pid];
            bool again = false;
            for (const RawDump* seen : of) {
                again = again || seen->source == dump.source;
            }
            if (!again) {
                of.push_back(&dump);
            }
        }
    }
    for (auto& [pid, of] : by_pid) {
        if (of.size() > 1) {
            // First and last as jemalloc counted them, not as a shell sorted the names.
            auto by_seq = [](const RawDump* a, const RawDump* b) {
                return parse_dump_name(a->source)->seq < parse_dump_name(b->source)->seq;
            };
            auto [first, last] = std::minmax_element(of.begin(), of.end(), by_seq);
            return fail("{} dumps of process {} ({} ... {}) are snapshots of one process, not "
                        "a merge: their sum counts what it held at each one; give the last "
                        "alone, or compare them with --growth (a series) or --base OLD NEW",
                        of.size(), pid, (*first)->source, (*last)->source);
        }
    }
    return {};
}

} // namespace

Result<void> check_mergeable(std::span<const RawDump> dumps) {
    if (dumps.size() < 2) {
        return {};
    }
    if (auto programs = check_one_program(dumps); !programs) {
        return programs;
    }
    return check_one_snapshot_per_process(dumps);
}

} // namespace heapkit
