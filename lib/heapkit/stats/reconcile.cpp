// SPDX-License-Identifier: MIT
#include "heapkit/stats/reconcile.hpp"

#include "heapkit/emit/quantity.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <utility>

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

// Stats printed as text are what redis's MEMORY MALLOC-STATS answers (other programs print
// JSON with stats_print_opts J): there redis's own commands come first.
bool from_redis(const JemallocStats& stats) {
    return stats.format == "text";
}

// The bytes profiling's sampled small objects cost beyond their own: each lives alone in
// an extent of the smallest large size class (jemalloc's prof promotion), and
// cache_oblivious adds a page to that extent. {in allocated, in active beyond allocated}.
std::pair<int64_t, int64_t> sampled_costs(const Reconciliation& out) {
    if (!out.profile || !out.stats.profiling) {
        return {0, 0};
    }
    const ProfileFigures& profile = *out.profile;
    uint64_t objects = std::min<uint64_t>(profile.sampled_small_objects, uint64_t{1} << 32);
    int64_t extents = signed_bytes(objects * out.stats.sampled_extent());
    int64_t own = signed_bytes(profile.sampled_small_bytes);
    int64_t pad = out.stats.cache_oblivious ? signed_bytes(objects * out.stats.page) : 0;
    return {std::max<int64_t>(extents - own, 0), pad};
}

// How lg_prof_sample moves the sampled objects' cost: a small object is sampled with a
// chance of its size over the period, so their number halves with each step up.
std::string sampled_knob(const Reconciliation& out, int64_t bytes) {
    const ProfileFigures& profile = *out.profile;
    int64_t lg = out.stats.lg_prof_sample;
    if (lg < 0 && profile.sample_period != 0) {
        lg = std::countr_zero(profile.sample_period);
    }
    if (lg < 0) {
        return "lg_prof_sample: each step up halves it";
    }
    return fmt::format("lg_prof_sample (now {}): each step up halves it (lg_prof_sample:{} about "
                       "{}, :{} about {}); prof:false removes it",
                       lg, lg + 1, quantity(bytes / 2, true), lg + 2, quantity(bytes / 4, true));
}

// From the profile (or the program's share) up to stats.allocated.
void held_rows(const Reconciliation& out, std::vector<Row>& rows) {
    const JemallocStats& stats = out.stats;
    int64_t tcache = signed_bytes(stats.merged.tcache_bytes);
    int64_t program = signed_bytes(stats.allocated) - tcache;
    if (out.profile) {
        auto [sampled, pad] = sampled_costs(out);
        rows.push_back({"profile", "heap profile in use", out.profile->inuse, true,
                        "What the heap profile estimates the program holds: sampled "
                        "allocations, scaled up by the sampling rate.",
                        ""});
        if (stats.profiling) {
            rows.push_back(
                {"sampled_pages", "profiling's sampled-object pages", sampled, false,
                 fmt::format("Profiling's own cost: each of the {} live sampled small objects "
                             "is given an extent of {} bytes of its own to carry its profile "
                             "(jemalloc's prof promotion), counted as allocated: {} x {} - "
                             "their {} bytes.",
                             out.profile->sampled_small_objects, stats.sampled_extent(),
                             out.profile->sampled_small_objects, stats.sampled_extent(),
                             out.profile->sampled_small_bytes),
                 sampled_knob(out, sampled)});
        }
        rows.push_back({"unprofiled", "not in the profile", program - out.profile->inuse - sampled,
                        false,
                        "Held by the program but not in the profile (negative: the profile "
                        "overestimates): sampling error, and allocations made while profiling "
                        "was inactive.",
                        "lg_prof_sample (finer sampling), prof_active from the start"});
    } else {
        std::string what = "Allocations the program holds, in size classes (requested sizes "
                           "rounded up).";
        if (stats.profiling) {
            what += " Profiling is on: this includes the extent of its own each sampled small "
                    "object is given";
            what += stats.merged.smallest_large_extents
                        ? fmt::format(", at most {} x {} bytes (the {}-byte class's extents, "
                                      "which also hold the program's own of that size)",
                                      *stats.merged.smallest_large_extents, stats.sampled_extent(),
                                      stats.sampled_extent())
                        : std::string();
            what += "; give --dump to split them out.";
        }
        rows.push_back({"program", "held by the program", program, false, std::move(what),
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

// What moves partly used slabs, as far as the figures show it: fewer arenas only when
// the waste is spread over several.
std::string slab_knob(const JemallocStats& stats) {
    std::string knob;
    const std::vector<uint64_t>& waste = stats.arena_slab_waste;
    uint64_t total = 0;
    for (uint64_t bytes : waste) {
        total += bytes;
    }
    auto most = std::max_element(waste.begin(), waste.end());
    if (waste.size() > 1 && total > 0) {
        double share = static_cast<double>(*most) / static_cast<double>(total);
        if (share < 0.75) {
            knob = fmt::format("fewer arenas (narenas, now {} in use: the waste is spread over "
                               "them, the largest share {:.0f}%); ",
                               stats.arenas_in_use, share * 100.0);
        } else {
            knob = fmt::format("not narenas (arena {} holds {:.0f}% of it: fewer arenas would "
                               "not help); ",
                               most - waste.begin(), share * 100.0);
        }
    }
    knob += "keep short- and long-lived objects apart (an arena of their own); purging cannot "
            "free it, only freeing or moving the objects";
    if (from_redis(stats)) {
        knob += "; redis: activedefrag yes moves them (needs redis's own jemalloc: Debian's "
                "cannot defragment, CONFIG SET activedefrag yes is refused); a restart as the "
                "last resort";
    }
    return knob;
}

// stats.allocated up to stats.active: slabs and page rounding.
void active_rows(const Reconciliation& out, std::vector<Row>& rows) {
    const JemallocStats& stats = out.stats;
    int64_t gap = signed_bytes(stats.active) - signed_bytes(stats.allocated);
    auto [sampled, pad] = sampled_costs(out);
    if (stats.merged.bins.empty()) {
        rows.push_back({"slabs_and_rounding", "slabs and page rounding", gap, false,
                        "Free regions in partly used slabs and large allocations rounded to "
                        "pages (the statistics were printed without bins: no split).",
                        "print with bins to see more"});
    } else {
        int64_t slabs = signed_bytes(out.slab_waste);
        rows.push_back({"slab_waste", "partly used slabs", slabs, false,
                        "Free regions in slabs of small size classes that also hold live "
                        "objects (curslabs x slab size - curregs x size): fragmentation, worst "
                        "classes below.",
                        slab_knob(stats)});
        if (pad != 0) {
            rows.push_back({"sampled_page_pad", "sampled objects' extra page", pad, false,
                            fmt::format("The page cache_oblivious adds to the extent of each of "
                                        "profiling's {} live sampled small objects.",
                                        out.profile->sampled_small_objects),
                            "lg_prof_sample (fewer sampled objects), cache_oblivious:false"});
        }
        rows.push_back(
            {"large_rounding", "large page rounding", gap - slabs - pad, false,
             stats.profiling && pad == 0
                 ? "Large allocations rounded up to pages, the page cache_oblivious adds to "
                   "each, and (profiling is on) the extent of its own each sampled small "
                   "object is given."
                 : "Large allocations rounded up to pages, plus the page cache_oblivious adds "
                   "to each.",
             stats.profiling && pad == 0
                 ? "lg_prof_sample (fewer sampled objects), cache_oblivious:false"
                 : "cache_oblivious:false, sizes that are multiples of the page"});
    }
    rows.push_back({"active", "= active", signed_bytes(stats.active), true,
                    "stats.active: pages of extents in use (slabs and large allocations).", ""});
}

// What to do about dirty pages, from the figures: nothing when they go back by themselves,
// decay settings only when they are large and never purged by time.
std::string dirty_knob(const JemallocStats& stats, int64_t dirty) {
    std::string knob;
    bool large = dirty >= (int64_t{64} << 20) ||
                 (dirty >= (int64_t{4} << 20) && dirty * 4 >= signed_bytes(stats.resident));
    if (dirty == 0) {
        knob = "none needed: there are none";
    } else if (stats.dirty_decay_ms > 0 && stats.background_thread) {
        knob = fmt::format("none needed: background threads are on, so they go back by "
                           "themselves within dirty_decay_ms ({} ms)",
                           stats.dirty_decay_ms);
    } else if (stats.dirty_decay_ms > 0) {
        knob = fmt::format("they go back within dirty_decay_ms ({} ms) while the program "
                           "allocates; an idle program keeps them: background_thread:true "
                           "purges while idle",
                           stats.dirty_decay_ms);
    } else if (stats.dirty_decay_ms == 0) {
        knob = "none needed: dirty_decay_ms is 0, purged at once";
    } else if (large) {
        knob = "decay is off (dirty_decay_ms -1): a finite dirty_decay_ms with "
               "background_thread:true gives them back; arena.<i>.purge now";
    } else {
        knob = "few: decay is off (dirty_decay_ms -1), arena.<i>.purge gives them back";
    }
    if (from_redis(stats) && dirty != 0) {
        knob += "; redis: MEMORY PURGE gives them back now";
    }
    return knob;
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
                    stats.arenas_in_use > 1
                        ? "fewer arenas (narenas), metadata_thp; profiling (prof) adds internal"
                        : "metadata_thp; profiling (prof) adds internal"});
    rows.push_back(
        {"dirty", "dirty pages", dirty, false,
         fmt::format("Pages freed and kept for reuse, not yet given back: dirty_decay_ms is {}; "
                     "background threads are {}.",
                     decay_words(stats.dirty_decay_ms), stats.background_thread ? "on" : "off"),
         dirty_knob(stats, dirty)});
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

Reconciliation reconcile(const JemallocStats& stats, std::optional<ProfileFigures> profile,
                         const std::optional<ResidentMemory>& resident) {
    Reconciliation out;
    out.stats = stats;
    if (profile) {
        out.profile = *profile;
        out.profile->inuse = std::clamp(profile->inuse, -max_bytes, max_bytes);
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
