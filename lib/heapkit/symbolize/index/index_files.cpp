// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/index_files.hpp"

#include "heapkit/symbolize/debug_files/debian_package.hpp"
#include "heapkit/symbolize/debug_files/debug_search.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/index/index_store.hpp"

#include <fmt/format.h>
#include <memory>
#include <sys/stat.h>

namespace heapkit {

std::vector<IndexedFile> index_files(const std::vector<std::string>& paths,
                                     const SymbolizeOptions& options,
                                     std::vector<std::string>& warnings, BuildLock::Wait wait) {
    DebugSearch search(debug_dirs_for(options.debug_dirs, options.sysroot));
    IndexStore store(options.cache_directory);
    std::vector<IndexedFile> results(paths.size());
    std::vector<std::unique_ptr<ElfModule>> files(paths.size());
    std::vector<std::pair<std::string, const ElfModule*>> wanted;
    for (size_t i = 0; i < paths.size(); ++i) {
        IndexedFile& result = results[i];
        result.path = paths[i];
        auto file = ElfModule::open(paths[i], search);
        if (!file) {
            result.problem = file.error().message;
            continue;
        }
        files[i] = std::move(*file);
        const std::string& build_id = files[i]->build_id();
        if (build_id.empty()) {
            // Indexes are found by build id: one of a file without any could be taken for
            // another build's.
            result.problem =
                fmt::format("{}: no build id (indexes are kept by build id)", paths[i]);
            continue;
        }
        result.key = cache_key(build_id, files[i]->has_dwarf());
        result.built = !store.has(result.key, build_id);
        if (result.built) {
            wanted.emplace_back(result.key, files[i].get());
        }
    }
    store.build(wanted, wait);
    // Which Debian package installed each file without DWARF: the warnings about its
    // unnamed frames name its -dbgsym, and the first profile need not look it up.
    std::vector<std::string> without_dwarf;
    for (size_t i = 0; i < paths.size(); ++i) {
        if (files[i] && !files[i]->has_dwarf()) {
            without_dwarf.push_back(paths[i]);
        }
    }
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
