// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/index/address_index.hpp"
#include "heapkit/symbolize/index/build_lock.hpp"
#include "heapkit/symbolize/index/cache_usage.hpp"
#include "heapkit/util/input.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace heapkit {

// The key under which a build's answers are kept (its address index): its
// build id when they come from DWARF, a key of their own when from symbol tables alone.
// Installing the debug package later makes the build's DWARF found, and its answers are
// looked up afresh under the build id rather than served from the symbol tables' key.
inline std::string cache_key(const std::string& build_id, bool dwarf) {
    return dwarf ? build_id : build_id + "-symbols";
}

// Address indexes (address_index.hpp) kept on disk, the tools' one cache: one file per
// key in the versioned subdirectory "index-<version>" of the cache directory: built once
// per build, then mapped by every later run that meets the build, whatever addresses
// its dumps hold, under the keys of cache_key().
//
// Files are written whole and renamed into place, so concurrent runs see an old file or
// a new one, never a part. A file is used only when it opens as an index of this
// version for the key's build id; any other is rebuilt, with a warning. The directory is
// kept under `max_bytes` by removing the least recently used files (prune_indexes) after
// a run that added one.
class IndexStore {
public:
    // `directory` (the cache directory) empty: nothing is kept, and nothing is built
    // (ready() is false for every key). `max_bytes`: by default $HEAPKIT_CACHE_MAX_MB's
    // (cache_usage.hpp), 1 GiB when unset or not a number.
    explicit IndexStore(const std::string& directory,
                        uint64_t max_bytes = cache_max_bytes().value_or(default_cache_max_bytes));
    IndexStore(const IndexStore&) = delete;
    IndexStore& operator=(const IndexStore&) = delete;

    // True when indexes are kept (a directory was given).
    bool enabled() const { return !m_directory.empty(); }

    // True when a valid file for `key` is on disk (it is mapped on first use).
    bool has(const std::string& key, const std::string& build_id);

    // Forgets that `key` had no file, so that the next has() or find() looks again: after
    // another process built it.
    void look_again(const std::string& key);

    // What build() keeps of the indexes it makes. answers: each is served by find()
    // (held in memory where it could not be saved). saved_files: each is saved as soon as
    // it is made, then let go of, and its file closed (ElfModule::close_file: libdw's
    // data of it goes); find() maps the saved file: a caller indexing many modules holds
    // one module's data per thread, not those of all.
    enum class Keep { answers, saved_files };

    // Builds and saves the index of each (key, file) that has none yet, side by side on
    // up to min(hardware threads, builds) threads. Each file is used by one thread only.
    // A key another process is building (build_lock.hpp) is waited for with Wait::yes
    // (then found, or built here if that process failed), else left to it.
    void build(const std::vector<std::pair<std::string, const ElfModule*>>& wanted,
               BuildLock::Wait wait = BuildLock::Wait::yes, Keep keep = Keep::answers);

    // True when another process is building `key`'s index now.
    bool busy(const std::string& key) const { return BuildLock::busy(m_directory, key); }

    // The index for `key`, whose build is `build_id`: mapped, or built by build() (and
    // held in memory where it could not be saved); null when there is none.
    const AddressIndex* find(const std::string& key, const std::string& build_id);

    // Problems met (a damaged file rebuilt, a directory that cannot be written), each once,
    // since the last call; then trims the directory if something was written.
    std::vector<std::string> take_warnings();

    std::string path_of(const std::string& key) const { return m_directory + "/" + key; }

private:
    struct Held {
        std::optional<InputBuffer> mapped; // the file, when read from disk
        std::string built;                 // the bytes, when built by this run
        std::optional<AddressIndex> index; // viewing one of the two
        std::string failure;               // why build() made none
    };
    Held& load(const std::string& key, const std::string& build_id);
    // Viewed by held.index and saved, when held.built is an index; false when not.
    bool keep_built(const std::string& key, Held& held);
    void save(const std::string& key, Held& held);

    std::string m_directory; // the versioned subdirectory; empty: disabled
    uint64_t m_max_bytes;
    std::map<std::string, Held> m_held;
    std::vector<std::string> m_warnings;
    bool m_wrote = false;
    std::mutex m_saving; // build()'s threads saving with Keep::saved_files
};

} // namespace heapkit
