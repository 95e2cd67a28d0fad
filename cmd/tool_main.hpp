// SPDX-License-Identifier: MIT
// The flag set and error handling jeprof2pprof and heapfold share; only cmd/ sees CLI11,
// and only cmd/ reads what the user typed: the library gets typed options.
#pragma once

#include "heapkit/heapkit.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <new>
#include <regex>
#include <system_error>
#include <unistd.h>

namespace heapkit::cmd {

// `path` made absolute against the working directory. Paths go on to libdwfl, which takes
// a relative debug directory against each binary's own directory instead.
inline std::string absolute_path(std::string path) {
    std::error_code failed;
    std::filesystem::path absolute = std::filesystem::absolute(path, failed);
    return path.empty() || failed ? path : absolute.string();
}

// --path-map's OLD=NEW with NEW made absolute; OLD is a path as the dump spells it.
inline std::string absolute_path_map(std::string pair) {
    size_t equals = pair.find('=');
    if (equals == std::string::npos || equals + 1 == pair.size()) {
        return pair; // malformed (the tool says so) or NEW empty: nothing to resolve
    }
    return pair.substr(0, equals + 1) + absolute_path(pair.substr(equals + 1));
}

// What both tools take.
struct ToolOptions {
    std::vector<std::string> inputs; // dump paths; "-" is standard input
    std::vector<std::string> bases;  // --base dumps, subtracted (merged when several)
    std::string output;              // "" or "-" is standard output
    LoadOptions load;
    FrameOptions frames; // what the views show of frames
    StackFilter stacks;  // which stacks they show
    bool cache = true;   // use the frame cache (default_cache_directory())
    bool quiet = false;  // no progress line, no warnings
    bool strict = false; // unnamed frames make exit status 2
    bool growth = false; // the dumps are a series (load_series), not merged
};

// A CLI11 validator that accepts what `parse` accepts, with `expected` in its message.
template <class Parse>
CLI::Validator parsed_by(Parse parse, std::string what, std::string expected) {
    return CLI::Validator(
        [=](std::string& text) {
            return parse(text)
                       ? std::string()
                       : fmt::format("unknown {} \"{}\"; expected {}", what, text, expected);
        },
        "", what);
}

// ECMAScript, as the library compiles it.
inline CLI::Validator regex_validator() {
    return CLI::Validator(
        [](std::string& pattern) {
            try {
                std::regex compiled(pattern, std::regex::ECMAScript);
                return std::string();
            } catch (const std::regex_error& error) {
                return fmt::format("invalid regular expression \"{}\": {}", pattern, error.what());
            }
        },
        "REGEX", "regex");
}

inline std::optional<PathRewrite> parse_path_rewrite(std::string_view pair) {
    size_t equals = pair.find('=');
    if (equals == std::string_view::npos || equals == 0) {
        return std::nullopt;
    }
    return PathRewrite{std::string(pair.substr(0, equals)), std::string(pair.substr(equals + 1))};
}

// `sample_help` says what --sample chooses for this tool.
inline void add_common_flags(CLI::App& app, ToolOptions& options, const std::string& sample_help) {
    SymbolizeOptions& symbols = options.load.symbols;
    app.add_option("DUMP", options.inputs,
                   "jemalloc heap_v2 dumps or jeprof symbolized profiles, plain or gzipped; "
                   "'-' reads standard input; several are merged (with --growth, a series)")
        ->required();
    app.add_option("-o,--output", options.output, "write here instead of standard output")
        ->option_text("FILE");
    app.add_option("--base", options.bases,
                   "subtract this earlier dump (repeatable: several are merged); stacks "
                   "meet by function names, so another run of the program compares")
        ->option_text("BASE")
        ->allow_extra_args(false);
    app.add_option_function<std::string>(
           "--sample",
           [&options](const std::string& name) { options.load.sample = *parse_sample_type(name); },
           sample_help + ": inuse_space (default), inuse_objects, alloc_space, alloc_objects")
        ->option_text("TYPE")
        ->check(parsed_by(parse_sample_type, "sample type",
                          "inuse_space, inuse_objects, alloc_space or alloc_objects"));
    app.add_flag("--growth", options.growth,
                 "the dumps are a series of one program (at least 3, oldest first by their "
                 "times): rank stacks by growth that persists")
        ->excludes("--base");
    app.add_flag("--threads", options.load.per_thread, "split every stack by jemalloc thread");
    app.add_flag("--keep-allocator-frames", options.frames.keep_allocator_frames,
                 "keep malloc, operator new and jemalloc-internal frames, and the known "
                 "allocation wrappers (zmalloc, isc__mem_get, g_malloc, PyMem_Malloc, ...)");
    app.add_option("--drop-frames", options.frames.drop_frames,
                   "cut frames whose whole function name matches REGEX, and all frames they "
                   "call (pprof's drop_frames)")
        ->option_text("REGEX")
        ->check(regex_validator());
    app.add_option("--focus", options.stacks.focus,
                   "keep only stacks through a frame whose name (as shown: unnamed ones as "
                   "module!0xSTART or module+0xOFFSET) matches REGEX")
        ->option_text("REGEX")
        ->check(regex_validator());
    app.add_option("--ignore", options.stacks.ignore,
                   "leave out stacks through a frame whose name (as shown) matches REGEX")
        ->option_text("REGEX")
        ->check(regex_validator());
    app.add_flag_callback(
        "--keep-clone-suffixes", [&options] { options.frames.merge_clones = false; },
        "show GCC's copies of a function (f.part.0, f.constprop.0, f.cold) apart from it");
    app.add_flag_callback(
        "--no-symbolize", [&symbols] { symbols.names = false; },
        "leave frames unnamed (addresses, mappings and build ids only)");
    app.add_option("--binary", symbols.main_binary,
                   "the program's executable, wherever the dump says it was")
        ->option_text("PATH")
        ->transform(absolute_path);
    app.add_option("--sysroot", symbols.sysroot,
                   "look for every mapped file under DIR (a container's or host's root)")
        ->option_text("DIR")
        ->transform(absolute_path);
    app.add_option_function<std::vector<std::string>>(
           "--path-map",
           [&symbols](const std::vector<std::string>& pairs) {
               for (const std::string& pair : pairs) {
                   symbols.path_map.push_back(*parse_path_rewrite(pair));
               }
           },
           "open files under directory (or file) OLD under NEW instead; whole path "
           "components match (repeatable)")
        ->option_text("OLD=NEW")
        ->transform(absolute_path_map)
        ->check(CLI::Validator(
            [](std::string& pair) {
                return parse_path_rewrite(pair)
                           ? std::string()
                           : fmt::format("takes OLD=NEW (a path prefix and its replacement), "
                                         "not \"{}\"",
                                         pair);
            },
            "", "OLD=NEW"))
        ->allow_extra_args(false); // one value per flag: the dumps that follow stay dumps
    app.add_option("--debug-dir", symbols.debug_dirs,
                   "also look for debug files under DIR, in the layouts of /usr/lib/debug "
                   "(repeatable)")
        ->option_text("DIR")
        ->transform(absolute_path)
        ->allow_extra_args(false);
    app.add_flag_callback(
        "--no-cache", [&options] { options.cache = false; },
        "neither read nor write the frame cache ($HEAPKIT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)");
    app.add_flag("-q,--quiet", options.quiet, "no progress line and no warnings");
    app.add_flag("-v,--verbose", options.load.list_unnamed,
                 "after each module's count of addresses without a name, list them");
    app.add_flag("--strict", options.strict,
                 "exit with status 2 when any frame stays unnamed (output is still written)");
    app.set_version_flag("--version", std::string(app.get_name()) + " (heapkit) " + version);
}

inline int report_error(const CLI::App& app, const Error& error) {
    fmt::print(stderr, "{}: error: {}\n", app.get_name(), error.message);
    return 1;
}

// What loading said, over the dumps and the base dumps: told once at the end, each file
// once.
struct Said {
    LoadReport report;
    FilterMatches matched{false, false}; // --focus, --ignore matched in some profile loaded
    bool drop_frames_matched = false;    // --drop-frames matched a frame of some profile
    size_t inputs = 0;                   // dumps loaded
};

// The dumps at `paths`, loaded and filtered; what loading said is added to `said`.
inline Result<Profile> load(const std::vector<std::string>& paths, const ToolOptions& options,
                            Said& said) {
    std::vector<Input> inputs;
    for (const std::string& path : paths) {
        inputs.push_back(Input{path, std::nullopt});
    }
    auto loaded = load_profile(inputs, options.load);
    if (!loaded) {
        return tl::unexpected(loaded.error());
    }
    auto kept = filter_stacks(loaded->profile, options.stacks);
    if (!kept) {
        return tl::unexpected(kept.error());
    }
    merge_report(said.report, std::move(loaded->report));
    said.matched.focus = said.matched.focus || kept->focus;
    said.matched.ignore = said.matched.ignore || kept->ignore;
    said.inputs += paths.size();
    said.drop_frames_matched =
        said.drop_frames_matched || drop_frames_match(loaded->profile, options.frames.drop_frames);
    return std::move(loaded->profile);
}

// A filter pattern that matches no frame cuts nothing, or everything: most likely a typo.
inline void warn_unmatched(const ToolOptions& options, Said& said) {
    auto warn = [&](std::string_view flag, const std::string& pattern, std::string_view effect) {
        said.report.warnings.push_back(fmt::format(
            "{} '{}' matches no frame{}: {} (frames are matched by their names as shown, "
            "and unnamed ones by their text, e.g. 'libfoo.so!0x1a20' or 'libfoo.so\\+0x1a2b')",
            flag, pattern, said.inputs > 1 ? " of any dump" : "", effect));
    };
    if (!said.matched.focus) {
        warn("--focus", options.stacks.focus, "nothing is shown");
    }
    if (!said.matched.ignore) {
        warn("--ignore", options.stacks.ignore, "nothing is left out");
    }
    if (!options.frames.drop_frames.empty() && !said.drop_frames_matched) {
        warn("--drop-frames", options.frames.drop_frames,
             "nothing is cut (it must match a whole function name)");
    }
}

// A wrapper the allocator list does not know, above most of the value: which
// --drop-frames would cut it. (Not when the allocator's frames are kept: then the leaf
// is malloc.)
inline void hint_wrapper(const Profile& profile, const ToolOptions& options, Said& said) {
    if (options.quiet || options.frames.keep_allocator_frames) {
        return;
    }
    FoldedOptions folded;
    folded.sample = options.load.sample;
    folded.frames = options.frames;
    auto hint = find_wrapper_hint(profile, folded);
    if (hint && *hint) {
        const WrapperHint& found = **hint;
        std::string more =
            options.frames.drop_frames.empty() ? std::string() : "|" + options.frames.drop_frames;
        said.report.warnings.push_back(fmt::format(
            "{} is the frame just above the allocator under {:.0f}% of {}, called from {} "
            "places: if it only allocates for its callers, --drop-frames '{}{}' cuts it so "
            "that they are the leaves",
            found.frame, found.share * 100, name_of(options.load.sample), found.callers,
            found.drop_frames, more));
    }
}

// What loading said, printed; the exit status for a successful write.
inline int finish(const CLI::App& app, const ToolOptions& options, Said& said) {
    warn_unmatched(options, said);
    if (!options.quiet) {
        std::vector<std::string> warnings = said.report.warnings;
        for (std::string& line : unnamed_warnings(said.report, options.load.list_unnamed)) {
            warnings.push_back(std::move(line));
        }
        for (const std::string& warning : warnings) {
            fmt::print(stderr, "{}: warning: {}\n", app.get_name(), warning);
        }
    }
    return options.strict && said.report.unnamed_locations > 0 ? 2 : 0;
}

// --growth: the dumps loaded as a series, each filtered, handed to `write`.
template <class WriteSeries>
int run_series(const CLI::App& app, const ToolOptions& options, WriteSeries write) {
    std::vector<Input> inputs;
    for (const std::string& path : options.inputs) {
        inputs.push_back(Input{path, std::nullopt});
    }
    auto series = load_series(inputs, options.load);
    if (!series) {
        return report_error(app, series.error());
    }
    Said said{std::move(series->report)};
    FilterMatches matched{false, false}; // in some dump of the series
    for (Profile& dump : series->dumps) {
        auto kept = filter_stacks(dump, options.stacks);
        if (!kept) {
            return report_error(app, kept.error());
        }
        matched.focus = matched.focus || kept->focus;
        matched.ignore = matched.ignore || kept->ignore;
        said.drop_frames_matched =
            said.drop_frames_matched || drop_frames_match(dump, options.frames.drop_frames);
    }
    said.matched = matched;
    said.inputs = series->dumps.size();
    if (auto written = write(series->dumps); !written) {
        return report_error(app, written.error());
    }
    return finish(app, options, said);
}

// Parses argv, loads the dumps (and the --base dumps), hands them to `write` (which writes
// the tool's output from the profile and the base, null without --base; with --growth,
// `write_series` writes from the series' dumps instead), prints warnings and errors as
// "<name>: ...", and returns the exit status: 0 done, 1 usage, input or output error, 2
// under --strict when a frame stayed unnamed.
template <class Write, class WriteSeries>
int parse_and_run(CLI::App& app, int argc, char** argv, ToolOptions& options, Write write,
                  WriteSeries write_series) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& done) {
        return app.exit(done);
    } catch (const CLI::ParseError& error) {
        app.exit(error);
        return 1;
    }
    if (options.cache) {
        options.load.symbols.cache_directory = default_cache_directory();
    }
    options.load.symbols.progress = !options.quiet && ::isatty(STDERR_FILENO);
    if (options.growth) {
        return run_series(app, options, write_series);
    }
    Said said;
    auto profile = load(options.inputs, options, said);
    if (!profile) {
        return report_error(app, profile.error());
    }
    std::optional<Profile> base;
    if (!options.bases.empty()) {
        auto loaded = load(options.bases, options, said);
        if (!loaded) {
            return report_error(app, loaded.error());
        }
        base = std::move(*loaded);
    }
    hint_wrapper(*profile, options, said);
    if (auto written = write(*profile, base ? &*base : nullptr); !written) {
        return report_error(app, written.error());
    }
    return finish(app, options, said);
}

// parse_and_run, with the one catch of the tools: what the library reports as Result
// errors, a failed allocation (or an exception from a dependency) is reported the same
// way, after unwinding has removed any temporary output file.
template <class Write, class WriteSeries>
int run(CLI::App& app, int argc, char** argv, ToolOptions& options, Write write,
        WriteSeries write_series) {
    try {
        return parse_and_run(app, argc, argv, options, write, write_series);
    } catch (const std::bad_alloc&) {
        fmt::print(stderr,
                   "{}: error: out of memory (the input needs more memory than this "
                   "process may allocate)\n",
                   app.get_name());
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: error: {}\n", app.get_name(), error.what());
    }
    return 1;
}

} // namespace heapkit::cmd
