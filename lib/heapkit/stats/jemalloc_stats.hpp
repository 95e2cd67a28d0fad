// SPDX-License-Identifier: MIT
// What jemalloc's malloc_stats_print says about a process's memory, as far as the
// reconciliation needs it: the same figures whichever format (JSON or text) they came in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit::stats {

// One small size class (a "bin") of one arena, or of all arenas merged.
struct BinStats {
    uint64_t size = 0;      // bytes per region (the size class)
    uint64_t regions = 0;   // regions per slab (arenas.bin.<j>.nregs)
    uint64_t slab_size = 0; // bytes per slab (arenas.bin.<j>.slab_size)
    uint64_t curregs = 0;   // regions handed out (to the program or to thread caches)
    uint64_t curslabs = 0;  // slabs that hold at least one such region
    uint64_t nonfull_slabs = 0;

    // Bytes of slabs not holding a region: what partly used slabs cost.
    uint64_t wasted() const {
        uint64_t held = curslabs * slab_size;
        uint64_t used = curregs * size;
        return held > used ? held - used : 0;
    }
};

// One arena, or the merge of all (stats.arenas.<i>.*). Page counts are in pages of
// JemallocStats::page bytes.
struct ArenaStats {
    uint64_t threads = 0;       // nthreads: threads bound to it
    uint64_t pactive = 0;       // pages of active extents
    uint64_t pdirty = 0;        // pages freed, not yet given back (decay or purge pending)
    uint64_t pmuzzy = 0;        // pages given back lazily (MADV_FREE): the kernel may reclaim them
    int64_t dirty_decay_ms = 0; // in force for this arena (-1: never purged by time)
    int64_t muzzy_decay_ms = 0;
    uint64_t base = 0;         // metadata from the base allocator
    uint64_t internal = 0;     // metadata allocated internally (e.g. profiling, extents)
    uint64_t tcache_bytes = 0; // small and large objects cached by thread caches
    uint64_t small_allocated = 0;
    uint64_t large_allocated = 0;
    uint64_t resident = 0;
    uint64_t mapped = 0;
    uint64_t retained = 0;
    std::vector<BinStats> bins; // by bin index
};

// The allocator-wide figures (stats.*), the options in force, and the arenas.
struct JemallocStats {
    std::string version;  // "5.3.0-0-g54eaed…"; "" when not printed
    std::string format;   // "json" or "text": what it was read from
    uint64_t page = 4096; // arenas.page
    // stats.*: bytes
    uint64_t allocated = 0; // in allocations (size classes), thread caches included
    uint64_t active = 0;    // in pages of active extents
    uint64_t metadata = 0;  // allocator metadata (base + internal)
    uint64_t resident = 0;  // physically resident pages of the allocator (an upper bound)
    uint64_t mapped = 0;    // in extents mapped and not retained
    uint64_t retained = 0;  // virtual memory kept mapped but unused (opt.retain)
    // Options in force (opt.* and arenas.*)
    bool background_thread = false; // background_thread (the current value, not opt)
    bool retain = false;            // opt.retain
    bool tcache = true;             // opt.tcache
    bool profiling = false;         // opt.prof: sampled small objects get pages of their own
    uint64_t tcache_max = 0;        // arenas.tcache_max: largest size class cached
    int64_t narenas_option = 0;     // opt.narenas: arenas for automatic assignment
    uint64_t narenas = 0;           // arenas.narenas: arenas that exist (incl. manual)
    int64_t dirty_decay_ms = 0;     // arenas.dirty_decay_ms: the default for new arenas
    int64_t muzzy_decay_ms = 0;
    // opt.stats_print: jemalloc printed these at exit, after the program's destructors and
    // atexit handlers freed what they free (what it held while running is not here).
    bool printed_at_exit = false;
    // stats.arenas: the merge (stats.arenas.4096, what "merged" prints; the only arena
    // when one is in use), and how many arenas were printed apart (initialized ones).
    ArenaStats merged;
    uint64_t arenas_in_use = 0;
};

} // namespace heapkit::stats
