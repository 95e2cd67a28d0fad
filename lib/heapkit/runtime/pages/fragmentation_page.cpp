// SPDX-License-Identifier: MIT
// The exact fragmentation profile (fragmentation_page.hpp). Sampling error: each stack's
// figure is a Horvitz-Thompson sum (every sampled object's charge divided by the
// probability it was sampled), unbiased; README "Fragmentation" states its spread.
#include "heapkit/runtime/pages/fragmentation_page.hpp"

#include "heapkit/emit/writers.hpp"
#include "heapkit/runtime/export/export.hpp"
#include "heapkit/runtime/fragmentation_sampler.hpp"
#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/pages/heap_views.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/stats/fragmentation.hpp"
#include "heapkit/util/try.hpp"

#include <climits>
#include <cmath>
#include <fmt/format.h>
#include <link.h>
#include <map>
#include <tuple>

namespace heapkit::runtime {
namespace {

// experimental.utilization.batch_query's answer per pointer (jemalloc 5.3's
// inspect_extent_util_stats_t): its extent's free regions, regions and bytes.
struct Utilization {
    size_t nfree = 0;
    size_t nregs = 0;
    size_t size = 0;
};

Result<std::vector<Utilization>> utilization(const Mallctl& mallctl,
                                             const std::vector<SampledObject>& objects) {
    constexpr size_t batch = 4096;
    std::vector<Utilization> out(objects.size());
    std::vector<const void*> pointers;
    for (size_t first = 0; first < objects.size(); first += batch) {
        size_t count = std::min(batch, objects.size() - first);
        pointers.clear();
        for (size_t i = first; i < first + count; ++i) {
            pointers.push_back(reinterpret_cast<const void*>(objects[i].address));
        }
        size_t out_size = count * sizeof(Utilization);
        int error = mallctl.copy().mallctl("experimental.utilization.batch_query", &out[first],
                                           &out_size, pointers.data(), count * sizeof(const void*));
        if (error != 0) {
            return fail("{}: experimental.utilization.batch_query failed (error {})",
                        mallctl.copy().object, error);
        }
    }
    return out;
}

// The arena that holds `address` (arenas.lookup), or -1 when it is gone meanwhile.
int arena_of(const Mallctl& mallctl, uint64_t address) {
    unsigned arena = 0;
    size_t size = sizeof(arena);
    auto* pointer = reinterpret_cast<void*>(address);
    return mallctl.copy().mallctl("arenas.lookup", &arena, &size, &pointer, sizeof(pointer)) == 0
               ? static_cast<int>(arena)
               : -1;
}

// The object (load address range) holding `code`; {0, 0} when none.
std::pair<uintptr_t, uintptr_t> object_of(const void* code) {
    dl_find_object found{};
    if (_dl_find_object(const_cast<void*>(code), &found) != 0) {
        return {0, 0};
    }
    return {reinterpret_cast<uintptr_t>(found.dlfo_map_start),
            reinterpret_cast<uintptr_t>(found.dlfo_map_end)};
}

// The stack from the program's call of malloc on: the leading frames in heapkit's sampler
// (the hook's or the interposers' object) and in jemalloc are cut (jemalloc linked into
// the executable is left to the writers, which cut allocator frames by name).
// `jemalloc` and `keeper` are their objects' ranges, found once per page.
std::vector<uint64_t> program_frames(const std::vector<uint64_t>& frames,
                                     std::pair<uintptr_t, uintptr_t> jemalloc,
                                     std::pair<uintptr_t, uintptr_t> keeper) {
    static const auto own = object_of(reinterpret_cast<const void*>(&fragmentation_sample));
    auto inside = [](uint64_t address, std::pair<uintptr_t, uintptr_t> range) {
        return address - 1 >= range.first && address - 1 < range.second;
    };
    size_t skip = 0;
    while (skip + 1 < frames.size() &&
           (inside(frames[skip], own) || inside(frames[skip], jemalloc) ||
            inside(frames[skip], keeper))) {
        ++skip;
    }
    return {frames.begin() + static_cast<std::ptrdiff_t>(skip), frames.end()};
}

std::pair<uintptr_t, uintptr_t> jemalloc_object(const Mallctl& mallctl) {
    return mallctl.copy().in_executable
               ? std::pair<uintptr_t, uintptr_t>{0, 0}
               : object_of(reinterpret_cast<const void*>(mallctl.copy().mallctl));
}

struct Totals {
    double space = 0;   // free bytes charged
    double regions = 0; // free regions charged
    double objects = 0; // live objects
    double bytes = 0;   // their regions' bytes
};

// (program frames, region size, arena) -> unsampled totals, of the objects in slabs.
using Charges = std::map<std::tuple<std::vector<uint64_t>, size_t, int>, Totals>;

Charges charge(const FragmentationSample& sample, const std::vector<Utilization>& slabs,
               const Mallctl& mallctl) {
    Charges charges;
    auto jemalloc = jemalloc_object(mallctl);
    auto keeper = object_of(reinterpret_cast<const void*>(sample.keeper));
    for (size_t i = 0; i < sample.objects.size(); ++i) {
        const SampledObject& object = sample.objects[i];
        const Utilization& slab = slabs[i];
        if (slab.nregs <= 1 || slab.nfree >= slab.nregs) {
            continue; // an extent of its own (charged nothing), or freed meanwhile
        }
        double kept =
            -std::expm1(-static_cast<double>(object.size) / static_cast<double>(sample.mean_bytes));
        double weight = kept > 0 ? 1 / kept : 1;
        size_t region = slab.size / slab.nregs;
        double live = static_cast<double>(slab.nregs - slab.nfree);
        Totals& totals = charges[{program_frames(object.frames, jemalloc, keeper), region,
                                  arena_of(mallctl, object.address)}];
        totals.space += weight * static_cast<double>(slab.nfree * region) / live;
        totals.regions += weight * static_cast<double>(slab.nfree) / live;
        totals.objects += weight;
        totals.bytes += weight * static_cast<double>(region);
    }
    return charges;
}

std::string bin_label(size_t region, int arena) {
    return arena < 0 ? fmt::format("{} B", region) : fmt::format("{} B, arena {}", region, arena);
}

Result<Profile> fragmentation(const FragmentationSample& sample, const Charges& charges,
                              bool names) {
    RawDump dump;
    dump.source = "fragmentation sample";
    dump.sample_period = 1;
    for (const auto& [key, totals] : charges) {
        dump.add_stack(std::get<0>(key), {1, 1, 0, 0}); // values set below
    }
    Profile profile = own_profile(std::move(dump), names);
    if (profile.samples.size() != charges.size()) {
        return fail("the fragmentation profile lost {} of its {} stacks",
                    charges.size() - profile.samples.size(), charges.size());
    }
    std::map<std::string, int32_t> labels;
    size_t s = 0;
    for (const auto& [key, totals] : charges) {
        Sample& out = profile.samples[s++];
        std::string label = bin_label(std::get<1>(key), std::get<2>(key));
        auto [it, added] = labels.emplace(label, static_cast<int32_t>(labels.size()));
        if (added) {
            profile.thread_labels.push_back(label);
        }
        out.thread = it->second;
        out.values.alloc_space = std::llround(totals.space);
        out.values.alloc_objects = std::llround(totals.regions);
        out.values.inuse_objects = std::llround(totals.objects);
        out.values.inuse_space = std::llround(totals.bytes);
    }
    profile.named_types = {{std::string(stats::fragmentation_objects), "count"},
                           {std::string(stats::fragmentation_space), "bytes"},
                           {"inuse_objects", "count"},
                           {"inuse_space", "bytes"}};
    profile.has_accum = true;
    profile.notes.push_back(fmt::format(
        "fragmentation_space: exact per sampled object (tcmalloc's rule: a slab's free bytes "
        "over its live objects, from jemalloc's experimental.utilization.batch_query), {} "
        "sampled objects (one per {} bytes allocated on average), unsampled",
        sample.objects.size(), sample.mean_bytes));
    profile.notes.push_back("fragmentation sample " + sample.way);
    if (sample.dropped > 0) {
        profile.notes.push_back(fmt::format(
            "{} sampled objects were not kept: the sample's table was full", sample.dropped));
    }
    return profile;
}

} // namespace

// format=svg draws the profile as a flame graph, the page jestat's links to.
struct FragmentationQuery {
    bool symbolize = true;
    bool svg = false;
    unsigned width = 1200;
};

Result<FragmentationQuery> fragmentation_query(const Request& request) {
    static constexpr std::string_view keys[] = {"symbolize", "format", "width"};
    HEAPKIT_TRY_ASSIGN(Query query, parse_query(request.path, request.query, keys));
    FragmentationQuery out;
    HEAPKIT_TRY_ASSIGN(out.symbolize, query_flag(query, "symbolize", true));
    HEAPKIT_TRY_ASSIGN(out.width,
                       query_number(query, "width", 1200, FlameOptions::min_width, 20000));
    if (auto format = query.find("format"); format != query.end()) {
        if (format->second != "pprof" && format->second != "svg") {
            return fail("format={}: expected pprof or svg", format->second);
        }
        out.svg = format->second == "svg";
    }
    return out;
}

Response flame_graph(const Profile& profile, unsigned width) {
    FoldedOptions folded;
    folded.sample = stats::fragmentation_space_slot;
    FlameOptions flame;
    flame.width = width;
    flame.title = "Fragmentation: the free bytes of partly used slabs, by the stacks whose "
                  "live objects hold them";
    return flame_graph_response(profile, folded, flame);
}

Response fragmentation_profile(const Request& request) {
    auto query = fragmentation_query(request);
    if (!query) {
        return text(400,
                    query.error().message + "\nquery takes symbolize=0|1&format=pprof|svg&width=N");
    }
    auto sample = fragmentation_sample();
    if (!sample) {
        return failure(403, sample.error());
    }
    auto mallctl = Mallctl::find();
    if (!mallctl) {
        return failure(500, mallctl.error());
    }
    auto slabs = utilization(*mallctl, sample->objects);
    if (!slabs) {
        return failure(500, slabs.error());
    }
    auto profile = fragmentation(*sample, charge(*sample, *slabs, *mallctl), query->symbolize);
    if (!profile) {
        return failure(500, profile.error());
    }
    if (query->svg) {
        return flame_graph(*profile, query->width);
    }
    PprofOptions options;
    options.default_type = stats::fragmentation_space_slot;
    options.thread_label_key = "bin";
    auto body = write_pprof(*profile, options);
    if (!body) {
        return failure(500, body.error());
    }
    return binary(std::move(*body), "application/octet-stream", "fragmentation.pb.gz");
}

} // namespace heapkit::runtime
