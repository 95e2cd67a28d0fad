// SPDX-License-Identifier: MIT
#include "heapkit/stats/reconcile.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace heapkit::stats {
namespace {

// Figures past 2^56 bytes (64 PiB) are not a real process's: capped there, the sums and
// differences of a waterfall's dozen rows cannot overflow.
constexpr int64_t max_bytes = int64_t{1} << 56;

int64_t signed_bytes(uint64_t bytes) {
    return static_cast<int64_t>(std::min<uint64_t>(bytes, max_bytes));
}

std::string decay_words(int64_t ms) {
    if (ms < 0) {
        return "-1: never by time, only by an explicit purge";
    }
    if (ms == 0) {
        return "0: at once";
    }
    return fmt::format("{} ms", ms);
}

std::vector<WastedBin> worst_bins(const std::vector<BinStats>& bins, uint64_t& total) {
    std::vector<WastedBin> wasted;
    total = 0;
    for (const BinStats& bin : bins) {
        uint64_t bytes = bin.wasted();
        total += bytes;
        if (bytes == 0) {
            continue;
        }
        double capacity = static_cast<double>(bin.curslabs) * static_cast<double>(bin.regions);
        wasted.push_back(
            {bin, bytes, capacity > 0 ? static_cast<double>(bin.curregs) / capacity : 0.0});
    }
    std::stable_sort(wasted.begin(), wasted.end(),
                     [](const WastedBin& a, const WastedBin& b) { return a.wasted > b.wasted; });
    if (wasted.size() > worst_bins_listed) {
        wasted.resize(worst_bins_listed);
    }
    return wasted;
}

// From the profile (or the program's share) up to stats.allocated.
void held_rows(const Reconciliation& out, std::vector<Row>& rows) {
    const JemallocStats& stats = out.stats;
    int64_t tcache = signed_bytes(stats.merged.tcache_bytes);
    int64_t program = signed_bytes(stats.allocated) - tcache;
    if (out.profile_inuse) {
        rows.push_back({"profile", "heap profile in use", *out.profile_inuse, true,
                        "What the heap profile estimates the program holds: sampled "
                        "allocations, scaled up by the sampling rate.",
                        ""});
        rows.push_back({"unprofiled", "not in the profile", program - *out.profile_inuse, false,
                        "Held by the program but not in the profile (negative: the profile "
                        "overestimates): sampling error, and allocations made while profiling "
                        "was inactive.",
                        "lg_prof_sample (finer sampling), prof_active from the start"});
    } else {
        rows.push_back({"program", "held by the program", program, false,
                        "Allocations the program holds, in size classes (requested sizes "
                        "rounded up).",
                        "the program's own allocations"});
    }
    rows.push_back({"tcache", "thread caches", tcache, false,
                    "Freed objects cached per thread for fast reuse; jemalloc counts them as "
                    "allocated.",
                    fmt::format("tcache_max (now {} bytes), tcache:false, thread.tcache.flush; "
                                "fewer threads",
                                stats.tcache_max)});
    // jemalloc 5.3 allocates malloc_stats_print's 64 KiB output buffer before it reads
    // the figures it prints (src/jemalloc.c, buf_writer_init).
    std::string what = "stats.allocated: bytes in allocations of the program and thread caches";
    what += stats.version.starts_with("5.3")
                ? ", and the 64 KiB buffer malloc_stats_print held while printing."
                : ".";
    rows.push_back({"allocated", "= allocated", signed_bytes(stats.allocated), true, what, ""});
}

// stats.allocated up to stats.active: slabs and page rounding.
void active_rows(const Reconciliation& out, std::vector<Row>& rows) {
    const JemallocStats& stats = out.stats;
    int64_t gap = signed_bytes(stats.active) - signed_bytes(stats.allocated);
    if (stats.merged.bins.empty()) {
        rows.push_back({"slabs_and_rounding", "slabs and page rounding", gap, false,
                        "Free regions in partly used slabs and large allocations rounded to "
                        "pages (the statistics were printed without bins: no split).",
                        "narenas, lg_extent_max_active_fit; print with bins to see more"});
    } else {
        int64_t slabs = signed_bytes(out.slab_waste);
        rows.push_back({"slab_waste", "partly used slabs", slabs, false,
                        "Free regions in slabs of small size classes that also hold live "
                        "objects (curslabs x slab size - curregs x size): fragmentation, worst "
                        "classes below.",
                        fmt::format("fewer arenas (narenas, now {} in use), keep short- and "
                                    "long-lived objects apart (their own arena); "
                                    "arena.<i>.purge cannot free it",
                                    stats.arenas_in_use)});
        // jemalloc counts a sampled object's requested size class as allocated, but gives
        // it a large extent (at least 16 KiB in 5.3) so that it can carry its profile.
        rows.push_back(
            {"large_rounding", "large page rounding", gap - slabs, false,
             stats.profiling
                 ? "Large allocations rounded up to pages, the page cache_oblivious adds to "
                   "each, and (profiling is on) the extent of its own each sampled small "
                   "object is given."
                 : "Large allocations rounded up to pages, plus the page cache_oblivious adds "
                   "to each.",
             stats.profiling ? "lg_prof_sample (fewer sampled objects), cache_oblivious:false"
                             : "cache_oblivious:false, sizes that are multiples of the page"});
    }
    rows.push_back({"active", "= active", signed_bytes(stats.active), true,
                    "stats.active: pages of extents in use (slabs and large allocations).", ""});
}

// stats.active up to stats.retained: what the allocator keeps besides the program's pages.
void kept_rows(const Reconciliation& out, std::vector<Row>& rows) {
    const JemallocStats& stats = out.stats;
    int64_t dirty = signed_bytes(stats.merged.pdirty * stats.page);
    int64_t muzzy = signed_bytes(stats.merged.pmuzzy * stats.page);
    int64_t resident = signed_bytes(stats.resident);
    int64_t mapped = signed_bytes(stats.mapped);
    rows.push_back({"metadata", "metadata (resident)",
                    resident - signed_bytes(stats.active) - dirty, false,
                    fmt::format("The allocator's own bookkeeping that is resident; stats.metadata "
                                "is {} bytes in all (base {}, internal {}).",
                                stats.metadata, stats.merged.base, stats.merged.internal),
                    "fewer arenas (narenas), metadata_thp; profiling (prof) adds internal"});
    rows.push_back(
        {"dirty", "dirty pages", dirty, false,
         fmt::format("Pages freed and kept for reuse, not yet given back: dirty_decay_ms is {}; "
                     "background threads are {}.",
                     decay_words(stats.dirty_decay_ms), stats.background_thread ? "on" : "off"),
         "dirty_decay_ms, background_thread:true (purges while idle), arena.<i>.purge / "
         "arena.<i>.decay"});
    rows.push_back({"resident", "= resident", resident, true,
                    "stats.resident: the allocator's resident pages (an upper bound: dirty "
                    "pages count whether touched or not).",
                    ""});
    rows.push_back({"muzzy", "muzzy pages", muzzy, false,
                    fmt::format("Pages given back lazily (MADV_FREE): the kernel reclaims them "
                                "under pressure, until then RSS may show them; muzzy_decay_ms "
                                "is {}.",
                                decay_words(stats.muzzy_decay_ms)),
                    "muzzy_decay_ms (0 skips this stage), arena.<i>.purge"});
    rows.push_back({"mapped_other", "other mapped", mapped - resident - muzzy, false,
                    "Mapped by the allocator but not resident: metadata pages never touched.",
                    "none needed: costs no RSS"});
    rows.push_back({"mapped", "= mapped", mapped, true,
                    "stats.mapped: extents and metadata the allocator has mapped.", ""});
    rows.push_back({"retained", "retained", signed_bytes(stats.retained), false,
                    "Virtual memory purged but kept mapped for reuse (opt.retain is " +
                        std::string(stats.retain ? "true" : "false") +
                        "): address space only, no RSS.",
                    "retain:false (gives it back with munmap)"});
    rows.push_back({"virtual", "= virtual", mapped + signed_bytes(stats.retained), true,
                    "All address space jemalloc holds.", ""});
}

std::vector<Row> rss_rows(const JemallocStats& stats, const ResidentMemory& memory) {
    uint64_t anonymous = memory.anonymous;
    uint64_t stacks = std::min(memory.stacks, anonymous);
    uint64_t jemalloc = std::min(stats.resident, anonymous - stacks);
    uint64_t other = anonymous - stacks - jemalloc;
    std::vector<Row> rows;
    std::string what = "The allocator's resident pages (stats.resident), as reconciled above.";
    if (jemalloc < stats.resident) {
        what = fmt::format("The allocator's resident pages: stats.resident says {} bytes, but "
                           "only this much anonymous memory is resident besides stacks (jemalloc "
                           "counts pages it never touched, or the kernel reclaimed).",
                           stats.resident);
    }
    rows.push_back({"jemalloc_resident", "jemalloc resident", signed_bytes(jemalloc), false,
                    std::move(what), "the rows above"});
    rows.push_back({"thread_stacks", "thread stacks", signed_bytes(stacks), false,
                    memory.per_mapping
                        ? "Resident pages of the main stack and of threads' stacks (anonymous "
                          "mappings above a guard page)."
                        : "Not known from smaps_rollup (give /proc/PID/smaps to split them "
                          "out): counted as other anonymous memory.",
                    "fewer threads, smaller stacks (pthread_attr_setstacksize, ulimit -s)"});
    rows.push_back({"other_anonymous", "other anonymous", signed_bytes(other), false,
                    "Anonymous memory that never went through jemalloc: direct mmap, another "
                    "allocator, a library's own pools, JIT code.",
                    "find the mappings in /proc/PID/smaps; route allocations through jemalloc"});
    rows.push_back({"file_backed", "file-backed", signed_bytes(memory.file), false,
                    "Pages of files: the program and its libraries, mapped files, shared memory; "
                    "clean ones the kernel can drop.",
                    "fewer or smaller mapped files; not the allocator"});
    rows.push_back({"rss", "= RSS", signed_bytes(memory.rss), true,
                    "The process's resident set (Rss in smaps).", ""});
    return rows;
}

} // namespace

Reconciliation reconcile(const JemallocStats& stats, std::optional<int64_t> profile_inuse,
                         const std::optional<ResidentMemory>& resident) {
    Reconciliation out;
    out.stats = stats;
    if (profile_inuse) {
        out.profile_inuse = std::clamp(*profile_inuse, -max_bytes, max_bytes);
    }
    out.resident = resident;
    out.worst_bins = worst_bins(stats.merged.bins, out.slab_waste);
    held_rows(out, out.allocator);
    active_rows(out, out.allocator);
    kept_rows(out, out.allocator);
    if (resident) {
        out.rss = rss_rows(stats, *resident);
    }
    return out;
}

} // namespace heapkit::stats
