// SPDX-License-Identifier: MIT
#include "heapkit/pipeline.hpp"

#include "heapkit/emit/folded_writer.hpp"
#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/symbolize/frame_cache.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/output.hpp"

#include <set>
#include <unistd.h>

namespace heapkit {
namespace {

// "OLD=NEW" pairs as typed on the command line.
Result<std::vector<PathRewrite>> parse_path_map(const std::vector<std::string>& pairs) {
    std::vector<PathRewrite> rewrites;
    for (const std::string& pair : pairs) {
        size_t equals = pair.find('=');
        if (equals == std::string::npos || equals == 0) {
            return fail("--path-map takes OLD=NEW (a path prefix and its replacement), not \"{}\"",
                        pair);
        }
        rewrites.push_back({pair.substr(0, equals), pair.substr(equals + 1)});
    }
    return rewrites;
}

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
    auto path_map = parse_path_map(options.path_map);
    if (!path_map) {
        return tl::unexpected(path_map.error());
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
    SymbolizeOptions symbolizer = options.symbols;
    symbolizer.names = options.symbolize;
    symbolizer.path_map = std::move(*path_map);
    symbolizer.progress = !options.quiet && ::isatty(STDERR_FILENO);
    if (options.cache) {
        symbolizer.cache_directory = default_cache_directory();
    }
    SymbolizeReport symbols = symbolize(loaded.profile, symbolizer);
    for (std::string& warning : symbols.warnings) {
        loaded.report.warnings.push_back(std::move(warning));
    }
    loaded.report.unresolved = options.symbolize ? symbols.unnamed_locations : 0;
    if (options.symbolize) {
        for (std::string& line :
             describe_unnamed(symbols.modules, symbols.unmapped, options.verbose)) {
            loaded.report.warnings.push_back(std::move(line));
        }
    }
    return loaded;
}

// --quiet silences warnings; errors are still reported.
ToolReport quiet(const ToolOptions& options, ToolReport report) {
    if (options.quiet) {
        report.warnings.clear();
    }
    return report;
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
    pprof.compress_level = options.compress_level;
    std::string bytes = write_pprof(loaded->profile, pprof);
    if (auto ok = write_output({options.output, true}, bytes); !ok) {
        return tl::unexpected(ok.error());
    }
    return quiet(options, std::move(loaded->report));
}

Result<ToolReport> run_heapfold(const ToolOptions& options) {
    auto style = parse_frame_style(options.frame); // a usage error, before any work
    if (!style) {
        return fail("unknown frame style \"{}\"; expected function, function+line or address",
                    options.frame);
    }
    auto loaded = load(options);
    if (!loaded) {
        return tl::unexpected(loaded.error());
    }
    FoldedOptions folded{loaded->sample, options.keep_allocator_frames, options.per_thread, *style,
                         options.annotate_inline};
    OutputStream out({options.output, false});
    auto ok = out.open();
    if (ok) {
        ok = write_folded(loaded->profile, folded,
                          [&](std::string_view piece) { return out.write(piece); });
    }
    if (ok) {
        ok = out.commit();
    }
    if (!ok) {
        return tl::unexpected(ok.error());
    }
    return quiet(options, std::move(loaded->report));
}

} // namespace heapkit
