// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/index_files.hpp"

#include "heapkit/symbolize/debug_files/debian_package.hpp"
#include "heapkit/symbolize/debug_files/debug_search.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/index/index_store.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <set>
#include <sys/stat.h>
#include <thread>

namespace heapkit {

namespace {

// Builds the indexes of `pending`'s files, then lets go of them.
void build_pending(IndexStore& store, std::vector<std::unique_ptr<ElfModule>>& pending,
                   std::vector<std::pair<std::string, const ElfModule*>>& wanted,
                   BuildLock::Wait wait) {
    store.build(wanted, wait, IndexStore::Keep::saved_files);
    wanted.clear();
    pending.clear();
}

} // namespace

std::vector<IndexedFile> index_files(const std::vector<std::string>& paths,
                                     const SymbolizeOptions& options,
                                     std::vector<std::string>& warnings, BuildLock::Wait wait) {
    DebugSearch search(debug_dirs_for(options.debug_dirs, options.sysroot));
    IndexStore store(options.cache_directory);
    std::vector<IndexedFile> results(paths.size());
    // Files are opened and built a few at a time, as many as build() runs side by side,
    // and closed once indexed: libdw's data of hundreds of modules (separate debug files
    // inflated in memory, line tables) is not all held at once.
    size_t batch = std::max(1U, std::thread::hardware_concurrency());
    // A file whose DWARF is this big is built alone, the next when it is done: two big
    // modules side by side held the sum of their builds' memory (375 MiB where the
    // biggest of 332 held 316 alone).
    constexpr uint64_t alone_bytes = uint64_t{16} << 20;
    std::vector<std::unique_ptr<ElfModule>> pending;
    std::vector<std::pair<std::string, const ElfModule*>> wanted;
    std::set<std::string> built_here; // keys of this run: a second path of a build is "built"
    std::vector<std::string> without_dwarf;
    for (size_t i = 0; i < paths.size(); ++i) {
        IndexedFile& result = results[i];
        result.path = paths[i];
        auto file = ElfModule::open(paths[i], search);
        if (!file) {
            result.problem = file.error().message;
            continue;
        }
        bool dwarf = (*file)->has_dwarf();
        if (!dwarf) {
            // Which Debian package installed it: the warnings about its unnamed frames
            // name its -dbgsym, and the first profile need not look it up.
            without_dwarf.push_back(paths[i]);
        }
        const std::string& build_id = (*file)->build_id();
        if (build_id.empty()) {
            // Indexes are found by build id: one of a file without any could be taken for
            // another build's.
            result.problem =
                fmt::format("{}: no build id (indexes are kept by build id)", paths[i]);
            continue;
        }
        result.key = cache_key(build_id, dwarf);
        result.built = built_here.contains(result.key) || !store.has(result.key, build_id);
        bool alone = dwarf && (*file)->dwarf_bytes() >= alone_bytes;
        if (result.built && built_here.insert(result.key).second) {
            if (alone) {
                build_pending(store, pending, wanted, wait); // the files before it first
            }
            wanted.emplace_back(result.key, file->get());
            pending.push_back(std::move(*file));
        }
        if (wanted.size() == batch || (alone && !wanted.empty())) {
            build_pending(store, pending, wanted, wait);
        }
    }
    build_pending(store, pending, wanted, wait);
    debian_packages_of(without_dwarf, options.cache_directory);
    for (std::string& warning : store.take_warnings()) {
        warnings.push_back(std::move(warning));
    }
    for (IndexedFile& result : results) {
        if (result.key.empty()) {
            continue;
        }
        std::string path = store.path_of(result.key);
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            result.index = path;
            result.bytes = static_cast<uint64_t>(st.st_size);
        } else if (store.busy(result.key)) {
            result.built = false;
            result.problem =
                fmt::format("{}: its address index is being made by another process", result.path);
        } else {
            result.built = false;
            result.problem = fmt::format("{}: its address index could not be saved in {}",
                                         result.path, store.path_of(""));
        }
    }
    return results;
}

} // namespace heapkit
