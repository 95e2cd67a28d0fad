// SPDX-License-Identifier: MIT
#include "heapkit/model/address_space.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

namespace heapkit {
namespace {

// Per file a dump maps, the least size the file must have to hold every page mapped from
// it: a mapping's last page holds at least one byte of the file (ld.so maps a segment's
// file bytes, its bss beyond them anonymously). The page size is taken as the largest
// power of two, up to 64 KiB, that the mapping's address, offset and length are all
// multiples of: never smaller than the kernel's, so the bound never asks too much.
std::map<std::string_view, uint64_t> least_file_sizes(const RawDump& dump) {
    std::map<std::string_view, uint64_t> sizes;
    for (const MapEntry& entry : dump.maps) {
        if (entry.path.empty() || entry.path.front() == '[' || entry.end <= entry.start) {
            continue;
        }
        uint64_t length = entry.end - entry.start;
        uint64_t aligned = entry.start | entry.file_offset | length | (uint64_t{1} << 16);
        uint64_t page = uint64_t{1} << std::countr_zero(aligned);
        uint64_t& least = sizes[entry.path];
        least = std::max(least, entry.file_offset + length - page + 1);
    }
    return sizes;
}

// What one more dump that maps `module` says of its file.
void note_dump(Module& module, int64_t dump_nanos, uint64_t least_size) {
    if (dump_nanos != 0 && (module.dumped_nanos == 0 || dump_nanos < module.dumped_nanos)) {
        module.dumped_nanos = dump_nanos;
    }
    module.least_file_size = std::max(module.least_file_size, least_size);
}

} // namespace

std::vector<AddressSpace> add_modules(Profile& profile, const std::vector<RawDump>& dumps) {
    std::vector<AddressSpace> spaces(dumps.size());
    using Key = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;
    std::map<Key, uint32_t> known;
    // Two passes so that every dump's main executable comes before any library.
    std::vector<std::vector<std::pair<const MapEntry*, bool>>> wanted(dumps.size());
    std::vector<std::map<std::string_view, uint64_t>> least_sizes(dumps.size());
    for (size_t d = 0; d < dumps.size(); ++d) {
        least_sizes[d] = least_file_sizes(dumps[d]);
        std::string main = dumps[d].main_path();
        for (const MapEntry& entry : dumps[d].maps) {
            if (entry.executable && !entry.path.empty() && entry.end > entry.start) {
                wanted[d].emplace_back(&entry, entry.path == main);
            }
        }
    }
    for (bool main_pass : {true, false}) {
        for (size_t d = 0; d < dumps.size(); ++d) {
            for (auto [entry, is_main] : wanted[d]) {
                if (is_main != main_pass) {
                    continue;
                }
                Key key{entry->path, entry->start, entry->end, entry->file_offset};
                auto [it, inserted] =
                    known.emplace(key, static_cast<uint32_t>(profile.modules.size()));
                if (inserted) {
                    Module module;
                    module.path = entry->path;
                    module.start = entry->start;
                    module.limit = entry->end;
                    module.file_offset = entry->file_offset;
                    module.deleted = entry->deleted;
                    module.is_main = is_main;
                    profile.modules.push_back(std::move(module));
                }
                note_dump(profile.modules[it->second], dumps[d].modified_nanos,
                          least_sizes[d][entry->path]);
                spaces[d].ranges.push_back({entry->start, entry->end, it->second});
            }
        }
    }
    for (AddressSpace& space : spaces) {
        std::sort(space.ranges.begin(), space.ranges.end(),
                  [](const auto& a, const auto& b) { return a.start < b.start; });
    }
    return spaces;
}

} // namespace heapkit
