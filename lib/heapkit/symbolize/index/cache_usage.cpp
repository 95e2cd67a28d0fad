// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/cache_usage.hpp"

#include "heapkit/symbolize/index/address_index.hpp"
#include "heapkit/symbolize/index/build_lock.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <string_view>

namespace heapkit {

namespace fs = std::filesystem;

Result<uint64_t> cache_max_bytes() {
    const char* value = std::getenv("HEAPKIT_CACHE_MAX_MB");
    if (value == nullptr || *value == '\0') {
        return default_cache_max_bytes;
    }
    std::string_view text(value);
    uint64_t megabytes = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), megabytes);
    if (ec != std::errc() || end != text.data() + text.size() || megabytes == 0 ||
        megabytes > (uint64_t{1} << 40)) {
        return fail("HEAPKIT_CACHE_MAX_MB={}: takes a whole number of MB from 1 up", text);
    }
    return megabytes << 20;
}

Result<CacheUsage> cache_usage(const std::string& directory) {
    CacheUsage usage;
    usage.index_directory = fmt::format("{}/index-{}", directory, address_index_version);
    std::error_code error;
    if (!fs::exists(directory, error)) {
        return usage;
    }
    fs::recursive_directory_iterator entries(directory, error);
    for (; !error && entries != fs::recursive_directory_iterator(); entries.increment(error)) {
        std::error_code gone; // a file another run removes meanwhile is simply gone
        if (entries->symlink_status(gone).type() != fs::file_type::regular) {
            continue;
        }
        uint64_t size = entries->file_size(gone);
        if (gone) {
            continue;
        }
        bool index = entries->path().parent_path() == usage.index_directory;
        (index ? usage.index_files : usage.other_files) += 1;
        (index ? usage.index_bytes : usage.other_bytes) += size;
    }
    if (error) {
        return fail("cannot list the cache {}: {}", directory, error.message());
    }
    return usage;
}

Pruned prune_indexes(const std::string& index_directory, uint64_t max_bytes,
                     std::vector<std::string>& warnings) {
    struct File {
        fs::file_time_type used;
        uint64_t size;
        fs::path path;
    };
    std::vector<File> files;
    uint64_t total = 0;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(index_directory, error)) {
        std::error_code gone;
        uint64_t size = entry.file_size(gone);
        auto used = entry.last_write_time(gone);
        // Only our own files: a link is not followed to what it leads to.
        if (!gone && entry.symlink_status(gone).type() == fs::file_type::regular) {
            files.push_back({used, size, entry.path()});
            total += size;
        }
    }
    if (error) {
        warnings.push_back(fmt::format("cannot list the address index directory {}: {}",
                                       index_directory, error.message()));
        return {};
    }
    std::sort(files.begin(), files.end(),
              [](const File& a, const File& b) { return a.used < b.used; });
    Pruned pruned;
    for (const File& file : files) {
        if (total <= max_bytes) {
            break;
        }
        auto lock =
            BuildLock::take(index_directory, file.path.filename().string(), BuildLock::Wait::no);
        std::error_code ignored;
        if (lock && fs::remove(file.path, ignored)) {
            total -= file.size;
            pruned.files += 1;
            pruned.bytes += file.size;
        }
    }
    return pruned;
}

} // namespace heapkit
