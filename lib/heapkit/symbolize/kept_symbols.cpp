// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/kept_symbols.hpp"

#include <sys/stat.h>

namespace heapkit {
namespace {

std::optional<FileIdentity> identity_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                        static_cast<uint64_t>(st.st_size),
                        int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

} // namespace

KeptSymbols::KeptSymbols(const SymbolizeOptions& options, size_t max_frames, size_t max_files)
    : m_debug_dirs(options.debug_dirs)
    , m_sysroot(options.sysroot)
    , m_max_frames(max_frames)
    , m_max_files(max_files)
    , m_search(debug_dirs_for(options.debug_dirs, options.sysroot)) {}

bool KeptSymbols::fits(const SymbolizeOptions& options) const {
    return options.debug_dirs == m_debug_dirs && options.sysroot == m_sysroot;
}

void KeptSymbols::trim() {
    if (m_files.size() > m_max_files || m_stats.frames > m_max_frames) {
        m_files.clear();
        m_answers.clear();
        m_strings = std::make_unique<StringPool>();
        m_stats.files = m_stats.frames = 0;
        ++m_stats.dropped;
    }
}

const OpenedFile& KeptSymbols::open(const std::string& path) {
    std::optional<FileIdentity> now = identity_of(path);
    auto [it, inserted] = m_files.try_emplace(path);
    Kept& kept = it->second;
    if (!inserted && kept.identity == now && kept.opened.file) {
        return kept.opened;
    }
    // New, another file now, or one that failed to open: a failure is not kept, since
    // it may pass (a process out of descriptors, a file being replaced). Answers kept
    // under a build id stay right (a build id names the bytes): only the file changes.
    kept.identity = now;
    kept.opened = OpenedFile{};
    auto opened = ElfModule::open(path, m_search);
    if (opened) {
        kept.opened.file = std::move(*opened);
        ++m_stats.opened;
    } else {
        kept.opened.error = opened.error();
    }
    m_stats.files = m_files.size();
    return kept.opened;
}

void KeptSymbols::close_files() {
    for (auto& [path, kept] : m_files) {
        if (kept.opened.file && !kept.opened.file->dwarf_read()) {
            kept.opened.file->close_file();
        }
    }
}

std::optional<std::span<const Frame>> KeptSymbols::find(const std::string& key, uint64_t vaddr) {
    auto build = m_answers.find(key);
    auto frames = build == m_answers.end() ? std::nullopt : build->second.find(vaddr);
    ++(frames ? m_stats.hits : m_stats.misses);
    return frames;
}

void KeptSymbols::add(const std::string& key, uint64_t vaddr, std::span<const Frame> frames) {
    std::vector<Frame> copies(frames.begin(), frames.end());
    for (Frame& frame : copies) {
        frame.name = m_strings->intern(frame.name);
        frame.system_name = m_strings->intern(frame.system_name);
        frame.file = m_strings->intern(frame.file);
    }
    if (m_answers[key].add(vaddr, copies)) {
        ++m_stats.frames;
    }
}

std::shared_ptr<KeptSymbols> make_kept_symbols(const SymbolizeOptions& options, size_t max_frames,
                                               size_t max_files) {
    return std::make_shared<KeptSymbols>(options, max_frames, max_files);
}

KeptSymbolsStats kept_symbols_stats(KeptSymbols& kept) {
    auto lock = kept.lock();
    return kept.stats();
}

} // namespace heapkit
