// SPDX-License-Identifier: MIT
#include "heapkit/runtime/telemetry.hpp"

#include "heapkit/util/input.hpp"
#include "heapkit/util/text.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace heapkit::runtime {
namespace {

constexpr std::array jemalloc_stats = {"allocated", "active",   "resident",
                                       "mapped",    "retained", "metadata"};
constexpr std::array memory_stat_fields = {
    "anon", "file", "kernel", "kernel_stack", "sock", "shmem", "file_mapped", "file_dirty", "slab"};

std::optional<std::string> read_text(const std::string& path) {
    auto input = read_input(path);
    return input ? std::optional(std::move(input->bytes)) : std::nullopt;
}

std::string metric_name(std::string_view key) {
    std::string name;
    for (char c : key) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        name += ok ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '_';
    }
    return name;
}

} // namespace

std::map<std::string, uint64_t> parse_smaps_rollup(std::string_view text) {
    std::map<std::string, uint64_t> fields;
    LineCursor lines(text);
    while (auto line = lines.next()) {
        size_t colon = line->find(':');
        if (colon == std::string_view::npos || colon == 0) {
            continue; // the first line names the range
        }
        std::string_view rest = line->substr(colon + 1);
        skip_spaces(rest);
        auto value = take_decimal(rest);
        skip_spaces(rest);
        if (value && rest == "kB") {
            fields[std::string(line->substr(0, colon))] = *value * 1024;
        }
    }
    return fields;
}

std::map<std::string, uint64_t> parse_memory_stat(std::string_view text) {
    std::map<std::string, uint64_t> fields;
    LineCursor lines(text);
    while (auto line = lines.next()) {
        size_t space = line->find(' ');
        std::string_view key = line->substr(0, space);
        if (space == std::string_view::npos ||
            std::find(memory_stat_fields.begin(), memory_stat_fields.end(), key) ==
                memory_stat_fields.end()) {
            continue;
        }
        std::string_view rest = line->substr(space + 1);
        if (auto value = take_decimal(rest); value && rest.empty()) {
            fields[std::string(key)] = *value;
        }
    }
    return fields;
}

std::optional<uint64_t> parse_memory_value(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.remove_suffix(1);
    }
    auto value = take_decimal(text);
    return value && text.empty() ? value : std::nullopt;
}

std::optional<std::string> cgroup_v2_path(std::string_view proc_self_cgroup) {
    LineCursor lines(proc_self_cgroup);
    while (auto line = lines.next()) {
        if (line->starts_with("0::")) {
            return std::string(line->substr(3));
        }
    }
    return std::nullopt;
}

MemoryTelemetry read_telemetry(const Mallctl* mallctl) {
    MemoryTelemetry telemetry;
    // jemalloc caches its statistics; writing "epoch" refreshes them.
    if (mallctl != nullptr && mallctl->write<uint64_t>("epoch", 1)) {
        for (const char* stat : jemalloc_stats) {
            if (auto value = mallctl->read<size_t>(fmt::format("stats.{}", stat).c_str())) {
                telemetry.jemalloc[stat] = *value;
            }
        }
    }
    if (auto text = read_text("/proc/self/smaps_rollup")) {
        telemetry.smaps_rollup = parse_smaps_rollup(*text);
    }
    auto cgroup = read_text("/proc/self/cgroup");
    auto path = cgroup ? cgroup_v2_path(*cgroup) : std::nullopt;
    if (path) {
        std::string dir = "/sys/fs/cgroup" + *path;
        for (const char* file : {"memory.current", "memory.max"}) {
            auto text = read_text(dir + "/" + file);
            if (auto value = text ? parse_memory_value(*text) : std::nullopt) {
                telemetry.cgroup[file] = *value;
            }
        }
        if (auto text = read_text(dir + "/memory.stat")) {
            for (auto& [key, value] : parse_memory_stat(*text)) {
                telemetry.cgroup["memory.stat." + key] = value;
            }
        }
    }
    return telemetry;
}

std::string to_prometheus(const MemoryTelemetry& telemetry) {
    std::string out;
    auto section = [&](std::string_view prefix, std::string_view help,
                       const std::map<std::string, uint64_t>& values) {
        for (const auto& [key, value] : values) {
            std::string name = fmt::format("{}_{}_bytes", prefix, metric_name(key));
            fmt::format_to(std::back_inserter(out), "# HELP {} {} {}\n# TYPE {} gauge\n{} {}\n",
                           name, help, key, name, name, value);
        }
    };
    section("heapkit_jemalloc", "jemalloc stats.", telemetry.jemalloc);
    section("heapkit_process", "/proc/self/smaps_rollup", telemetry.smaps_rollup);
    section("heapkit_cgroup", "cgroup v2", telemetry.cgroup);
    return out;
}

} // namespace heapkit::runtime
