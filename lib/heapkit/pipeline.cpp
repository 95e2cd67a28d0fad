// SPDX-License-Identifier: MIT
#include "heapkit/pipeline.hpp"

#include "heapkit/emit/folded_writer.hpp"
#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/output.hpp"

#include <set>

namespace heapkit {
namespace {

struct Loaded {
    Profile profile;
    SampleType sample;
    ToolReport report;
};

// read -> model -> unsample -> symbolize: everything both tools share.
Result<Loaded> load(const ToolOptions& options) {
    auto sample = parse_sample_type(options.sample);
    if (!sample) {
        return fail("unknown sample type \"{}\"; expected inuse_space, inuse_objects, "
                    "alloc_space or alloc_objects",
                    options.sample);
    }
    if (options.inputs.empty()) {
        return fail("no input dump given");
    }
    Loaded loaded{{}, *sample, {}};
    std::vector<RawDump> dumps;
    std::set<std::string> seen;
    for (const std::string& path : options.inputs) {
        if (!seen.insert(path).second) {
            loaded.report.warnings.push_back(
                fmt::format("{} is given more than once; its samples are counted each time", path));
        }
        auto dump = read_dump(path);
        if (!dump) {
            return tl::unexpected(dump.error());
        }
        dumps.push_back(std::move(*dump));
    }
    loaded.profile = build_profile(dumps, BuildOptions{options.per_thread});
    if (auto ok = check_sample_type(loaded.profile, *sample); !ok) {
        return tl::unexpected(ok.error());
    }
    SymbolizeReport symbols = symbolize(loaded.profile, SymbolizeOptions{options.symbolize});
    for (std::string& warning : symbols.warnings) {
        loaded.report.warnings.push_back(std::move(warning));
    }
    if (options.symbolize && symbols.unnamed_locations > 0) {
        loaded.report.warnings.push_back(fmt::format("{} of {} addresses have no name",
                                                     symbols.unnamed_locations,
                                                     loaded.profile.locations.size()));
    }
    return loaded;
}

} // namespace

Result<ToolReport> run_jeprof2pprof(const ToolOptions& options) {
    auto loaded = load(options);
    if (!loaded) {
        return tl::unexpected(loaded.error());
    }
    PprofOptions pprof;
    pprof.default_type = loaded->sample;
    pprof.keep_allocator_frames = options.keep_allocator_frames;
    std::string bytes = write_pprof(loaded->profile, pprof);
    if (auto ok = write_output({options.output, true}, bytes); !ok) {
        return tl::unexpected(ok.error());
    }
    return std::move(loaded->report);
}

Result<ToolReport> run_heapfold(const ToolOptions& options) {
    auto loaded = load(options);
    if (!loaded) {
        return tl::unexpected(loaded.error());
    }
    FoldedOptions folded{loaded->sample, options.keep_allocator_frames, options.per_thread};
    std::string text = write_folded(loaded->profile, folded);
    if (auto ok = write_output({options.output, false}, text); !ok) {
        return tl::unexpected(ok.error());
    }
    return std::move(loaded->report);
}

} // namespace heapkit
