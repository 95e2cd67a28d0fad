// SPDX-License-Identifier: MIT
// charge_fragmentation (stats/fragmentation.hpp): per-bin fragmentation from the stats,
// spread over the dump's stacks.
//
// Which bin a stack's objects are in. A heap_v2 record holds, per stack, a count and a
// total of usable sizes: no object's own size. The class nearest the average is the one
// answer the dump gives, and it is right for the common call site that allocates one type
// (every object of one size class). It is wrong for a stack whose objects span classes (a
// growing buffer, strings of any length): the average lands in one class between them, so
// that class is charged for objects that sit in others, and the classes they do sit in
// see fewer objects of that stack. An allocation log has every size; a dump does not.
//
// How a bin's free bytes are spread. tcmalloc's rule (Span::Fragmentation) charges each
// live object its slab's free bytes divided by the slab's live objects; without pointers,
// which slab holds which stack's objects is unknown. Spreading a bin's free bytes over its
// stacks in proportion to their live objects is that rule summed over the bin's slabs when
// every stack's objects are mixed into the slabs in the same proportion, which is what
// jemalloc's first-fit (lowest-address non-full slab first) makes of allocations that
// interleave in time. It is wrong where they do not: a stack that filled slabs of its own
// (full slabs, no free bytes) is charged a share it does not cause, taken from the stacks
// whose leftovers hold the nearly empty slabs. It needs no guess beyond the dump and the
// stats, and keeps each bin's total exact.
#include "heapkit/stats/fragmentation.hpp"

#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <numeric>
#include <vector>

namespace heapkit::stats {
namespace {

// Products of a count and a size, exact past 64 bits (GCC's and Clang's extension).
__extension__ typedef unsigned __int128 Wide;

constexpr size_t no_bin = static_cast<size_t>(-1);

// The size class nearest the sample's average size (bins are in increasing size); no_bin
// for a large one (nearer the smallest large class, `large`, than the largest bin) or a
// sample with nothing live. Nearest, not the next one up: the average of one class's
// objects is that class only before rounding, and jemalloc 5.3 writes unbiased counts
// (opt.prof_unbias) rounded per class, which moves it (96-byte objects sampled every
// 1 KiB average 96.45 bytes); the classes are 12.5 % or more apart from 64 bytes up.
size_t bin_of(const HeapValues& values, const std::vector<BinStats>& bins, uint64_t large) {
    if (values.inuse_objects <= 0 || values.inuse_space <= 0 || bins.empty()) {
        return no_bin;
    }
    auto objects = static_cast<Wide>(values.inuse_objects);
    auto space = static_cast<Wide>(values.inuse_space);
    // The first class at or above the average: size x objects >= space, without rounding.
    auto above = std::partition_point(bins.begin(), bins.end(), [&](const BinStats& bin) {
        return static_cast<Wide>(bin.size) * objects < space;
    });
    Wide upper = above == bins.end() ? static_cast<Wide>(large) : static_cast<Wide>(above->size);
    if (above == bins.begin()) {
        return 0;
    }
    if (upper * objects <= space) { // at or past the smallest large class
        return no_bin;
    }
    Wide lower = static_cast<Wide>(std::prev(above)->size);
    bool nearer_lower = space - lower * objects <= upper * objects - space;
    if (nearer_lower) {
        return static_cast<size_t>(std::prev(above) - bins.begin());
    }
    return above == bins.end() ? no_bin : static_cast<size_t>(above - bins.begin());
}

// `total` split in whole units in proportion to `weights` (all > 0), adding up to `total`
// exactly: each its floor, the units left over to the largest remainders (Hamilton's
// method; ties to the first).
std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& weights) {
    Wide sum = 0;
    for (uint64_t weight : weights) {
        sum += weight;
    }
    std::vector<uint64_t> shares(weights.size());
    std::vector<Wide> remainders(weights.size());
    uint64_t given = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        Wide product = static_cast<Wide>(total) * weights[i];
        shares[i] = static_cast<uint64_t>(product / sum);
        remainders[i] = product % sum;
        given += shares[i];
    }
    std::vector<size_t> order(weights.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
    for (size_t k = 0; k < total - given; ++k) { // fewer than weights.size() units
        ++shares[order[k]];
    }
    return shares;
}

uint64_t free_regions(const BinStats& bin) {
    uint64_t capacity = bin.curslabs * bin.regions;
    return capacity > bin.curregs ? capacity - bin.curregs : 0;
}

// A pseudo-stack of one frame, holding what no sampled stack takes of a bin.
void add_unattributed(Profile& profile, const BinStats& bin) {
    Location location;
    Frame frame;
    frame.name = profile.strings->intern(unattributed_frame(bin.size));
    frame.system_name = frame.name;
    location.frames.push_back(frame);
    auto id = static_cast<uint32_t>(profile.locations.size());
    profile.locations.push_back(std::move(location));
    HeapValues values;
    values.alloc_objects = static_cast<int64_t>(free_regions(bin));
    values.alloc_space = static_cast<int64_t>(bin.wasted());
    profile.add_sample({&id, 1}, values);
}

Result<void> check_inputs(const Profile& profile, const JemallocStats& stats,
                          std::string_view stats_source) {
    std::string_view dump =
        profile.sources.empty() ? std::string_view("the profile") : profile.sources.front();
    if (profile.from_log) {
        return fail("{}: an allocation log holds no live objects: fragmentation is charged "
                    "to the live objects of a heap dump",
                    dump);
    }
    if (!profile.named_types.empty()) {
        return fail("{}: a pprof profile's values are not a dump's live objects: give the "
                    "heap dump of the moment {} was printed",
                    dump, stats_source);
    }
    if (stats.merged.bins.empty()) {
        return fail("{}: no bins (printed with stats_print_opts \"b\"?): fragmentation is "
                    "counted per size class, from the bins",
                    stats_source);
    }
    return {};
}

} // namespace

bool is_fragmentation_estimate(const Profile& profile) {
    // By its note, not its types: the exact mode's profile (the runtime's
    // /debug/pprof/fragmentation) has the same types, and a pprof read back keeps no
    // comment that would say which it was.
    auto slot = static_cast<size_t>(fragmentation_space_slot);
    constexpr std::string_view note_start =
        "fragmentation_space and fragmentation_objects are an estimate";
    return slot < profile.named_types.size() &&
           profile.named_types[slot].name == fragmentation_space &&
           std::any_of(profile.notes.begin(), profile.notes.end(),
                       [&](const std::string& note) { return note.starts_with(note_start); });
}

std::string unattributed_frame(uint64_t class_size) {
    return fmt::format("[unattributed: bin {}]", class_size);
}

std::string fragmentation_note(std::string_view stats_source) {
    return fmt::format(
        "fragmentation_space and fragmentation_objects are an estimate: each size class's "
        "free regions in partly used slabs (exact, from {}, as jestat counts them) spread "
        "over the stacks with live objects in that class, in proportion to their objects; a "
        "stack's class is the one nearest its objects' average size (heapfold(1) says how "
        "far it can be from the truth)",
        stats_source);
}

Result<void> charge_fragmentation(Profile& profile, const JemallocStats& stats,
                                  std::string_view stats_source) {
    HEAPKIT_TRY(check_inputs(profile, stats, stats_source));
    const std::vector<BinStats>& bins = stats.merged.bins;
    // Each bin's samples (indexes) and their live objects, before any value is replaced.
    std::vector<std::vector<size_t>> members(bins.size());
    std::vector<std::vector<uint64_t>> weights(bins.size());
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        HeapValues& values = profile.samples[s].values;
        size_t bin = bin_of(values, bins, stats.sampled_extent());
        values.alloc_objects = 0; // large objects, and stacks with nothing live: none
        values.alloc_space = 0;
        if (bin != no_bin) {
            members[bin].push_back(s);
            weights[bin].push_back(static_cast<uint64_t>(values.inuse_objects));
        }
    }
    for (size_t b = 0; b < bins.size(); ++b) {
        if (bins[b].wasted() == 0 && free_regions(bins[b]) == 0) {
            continue;
        }
        if (members[b].empty()) {
            add_unattributed(profile, bins[b]);
            continue;
        }
        std::vector<uint64_t> space = apportion(bins[b].wasted(), weights[b]);
        std::vector<uint64_t> objects = apportion(free_regions(bins[b]), weights[b]);
        for (size_t m = 0; m < members[b].size(); ++m) {
            HeapValues& values = profile.samples[members[b][m]].values;
            values.alloc_objects = static_cast<int64_t>(objects[m]);
            values.alloc_space = static_cast<int64_t>(space[m]);
        }
    }
    profile.named_types = {{std::string(fragmentation_objects), "count"},
                           {std::string(fragmentation_space), "bytes"},
                           {"inuse_objects", "count"},
                           {"inuse_space", "bytes"}};
    profile.has_accum = true; // its alloc_* slots are filled
    profile.default_type = fragmentation_space_slot;
    profile.notes.insert(profile.notes.begin(), fragmentation_note(stats_source));
    return {};
}

} // namespace heapkit::stats
