// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/cache_directory.hpp"

#include "heapkit/symbolize/options.hpp"
#include "heapkit/util/private_files.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fmt/format.h>

namespace heapkit {

namespace fs = std::filesystem;

Result<void> check_cache_directory(const std::string& directory) {
    auto checked = check_private_directory(directory);
    if (checked || checked.error().system_error == ENOENT) {
        return {};
    }
    return fail("cache not used: {}; make it yours alone (chown, chmod go-w) or set "
                "HEAPKIT_CACHE_DIR to a directory of your own (or pass --no-cache)",
                checked.error().message);
}

void trim_cache_directory(const std::string& directory, uint64_t max_bytes, std::string_view what,
                          std::vector<std::string>& warnings) {
    struct File {
        fs::file_time_type used;
        uint64_t size;
        fs::path path;
    };
    std::vector<File> files;
    uint64_t total = 0;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
        std::error_code ignored; // a file another run removes meanwhile is simply gone
        uint64_t size = entry.file_size(ignored);
        auto used = entry.last_write_time(ignored);
        // Only our own files: a link is not followed to what it leads to.
        if (!ignored && entry.symlink_status(ignored).type() == fs::file_type::regular) {
            files.push_back({used, size, entry.path()});
            total += size;
        }
    }
    if (error) {
        warnings.push_back(fmt::format("cannot list {} {}: {}", what, directory, error.message()));
        return;
    }
    std::sort(files.begin(), files.end(),
              [](const File& a, const File& b) { return a.used < b.used; });
    for (const File& file : files) {
        if (total <= max_bytes) {
            break;
        }
        std::error_code ignored;
        fs::remove(file.path, ignored);
        total -= file.size;
    }
}

} // namespace heapkit
