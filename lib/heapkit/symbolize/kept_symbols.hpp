// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/string_pool.hpp"
#include "heapkit/symbolize/debug_files/debug_search.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/frame_entries.hpp"
#include "heapkit/symbolize/options.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

// A file opened for symbolization, or why it could not be.
struct OpenedFile {
    std::unique_ptr<ElfModule> file;
    Error error; // why `file` is null
};

// What tells one file on disk from another at the same path.
struct FileIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    uint64_t size = 0;
    int64_t modified_nanos = 0;
    bool operator==(const FileIdentity&) const = default;
};

// What a long-running process keeps between symbolize() calls (see make_kept_symbols()):
// the files opened, each again only when it changed on disk, and the answers found, in
// memory up to a bound. One symbolize() call at a time uses it (lock()).
class KeptSymbols {
public:
    KeptSymbols(const SymbolizeOptions& options, size_t max_frames, size_t max_files);
    KeptSymbols(const KeptSymbols&) = delete;
    KeptSymbols& operator=(const KeptSymbols&) = delete;

    // Held for a whole symbolize() call: files and answers are shared state.
    std::unique_lock<std::mutex> lock() { return std::unique_lock(m_mutex); }

    // True when made for the same debug directories and sysroot: its files were searched
    // for debug information where `options` would search.
    bool fits(const SymbolizeOptions& options) const;

    // Called with the lock held before a call uses the files: over the bounds, what is
    // kept is dropped (the call then opens and finds afresh).
    void trim();

    // The file at `path`, opened on first use and again when its identity on disk
    // (device, inode, size, modification time) changed; a file that failed to open is
    // tried again next time.
    const OpenedFile& open(const std::string& path);

    // Called with the lock held after a call: closes each kept file whose DWARF this
    // process has not read (ElfModule::close_file), keeping what was read at open. With
    // address indexes that is every file: between calls the process then holds none of
    // their descriptors and pages, and the next call opens only the files it must look
    // into (an address no index names). A file whose DWARF was read here (named without
    // an index) stays open: reading that again would cost each call seconds.
    void close_files();

    // Answers found by earlier calls, under the address indexes' keys (cache_key()).
    std::optional<std::span<const Frame>> find(const std::string& key, uint64_t vaddr);
    void add(const std::string& key, uint64_t vaddr, std::span<const Frame> frames);
    // A lookup answered from an address index, which is not kept here: counted alone.
    void count_indexed_lookup() { ++m_stats.indexed; }

    KeptSymbolsStats stats() const { return m_stats; }

private:
    struct Kept {
        OpenedFile opened;
        std::optional<FileIdentity> identity; // nullopt: the path could not be stat'ed
    };

    std::mutex m_mutex;
    std::vector<std::string> m_debug_dirs; // what fits() compares
    std::string m_sysroot;
    size_t m_max_frames;
    size_t m_max_files;
    DebugSearch m_search; // outlives every ElfModule in m_files
    std::map<std::string, Kept> m_files;
    std::unique_ptr<StringPool> m_strings = std::make_unique<StringPool>(); // kept texts
    std::map<std::string, FrameEntries> m_answers;
    KeptSymbolsStats m_stats;
};

} // namespace heapkit
