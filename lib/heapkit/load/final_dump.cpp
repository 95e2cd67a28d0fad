// SPDX-License-Identifier: MIT
#include "heapkit/load/final_dump.hpp"

#include "heapkit/growth/series_order.hpp"

#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>

namespace heapkit {
namespace {

// The bytes in use a dump's header counts ("heap_v2/524288\n  t*: 5: 4096 [0: 0]"): of the
// sampled objects, so only comparable between dumps of one process. nullopt for a file
// that does not start so (gzipped, a jeprof symbolized profile, unreadable).
std::optional<uint64_t> header_bytes(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::string first;
    std::string second;
    if (!std::getline(file, first) || !first.starts_with("heap_v2/") ||
        !std::getline(file, second)) {
        return std::nullopt;
    }
    size_t objects_end = second.find(": ", second.find("t*: ") + 4);
    if (second.find("t*: ") == std::string::npos || objects_end == std::string::npos) {
        return std::nullopt;
    }
    const char* begin = second.data() + objects_end + 2;
    uint64_t bytes = 0;
    auto [end, ec] = std::from_chars(begin, second.data() + second.size(), bytes);
    return ec == std::errc() ? std::optional(bytes) : std::nullopt;
}

bool is_running_kind(const std::string& kind) {
    return kind.size() >= 2 && (kind[0] == 'i' || kind[0] == 'm' || kind[0] == 'u');
}

} // namespace

std::string final_dump_note(const std::string& path) {
    std::optional<DumpName> name = parse_dump_name(path);
    if (!name || name->kind != "f") {
        return {};
    }
    std::filesystem::path directory = std::filesystem::path(path).parent_path();
    size_t others = 0;
    std::optional<std::pair<uint64_t, std::string>> largest; // bytes, file name
    std::error_code failed;
    std::filesystem::directory_iterator entries(directory.empty() ? "." : directory, failed);
    // An unreadable directory, or one that fails midway, only leaves the note shorter.
    for (; !failed && entries != std::filesystem::directory_iterator(); entries.increment(failed)) {
        const std::filesystem::directory_entry& entry = *entries;
        std::string file = entry.path().filename().string();
        std::optional<DumpName> other = parse_dump_name(file);
        if (!other || other->pid != name->pid || other->prefix != name->prefix ||
            !is_running_kind(other->kind)) {
            continue;
        }
        ++others;
        uint64_t bytes = header_bytes(entry.path()).value_or(0);
        if (!largest || std::pair(bytes, file) > *largest) {
            largest = std::pair(bytes, file);
        }
    }
    if (others == 0) {
        return "a final dump, written at exit (prof_final): what the program had not freed "
               "when it ended";
    }
    return fmt::format("a final dump, written at exit (prof_final): {} dump{} taken while "
                       "process {} ran {} beside it, the largest {} (heapfold --growth reads "
                       "them all)",
                       others, others == 1 ? "" : "s", name->pid, others == 1 ? "is" : "are",
                       largest->second);
}

} // namespace heapkit
