// SPDX-License-Identifier: MIT
// The flags jeprof2pprof and heapfold share, read into the library's ToolOptions (run_tool,
// heapkit.hpp); only cmd/ sees CLI11, and only cmd/ reads what the user typed.
#pragma once

#include "heapkit/heapkit.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <system_error>

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

// RE2's syntax (pprof's), as the library compiles it.
inline CLI::Validator regex_validator() {
    return CLI::Validator(
        [](std::string& pattern) {
            auto valid = check_pattern(pattern);
            return valid ? std::string() : valid.error().message;
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

// --help lists a tool's flags by group, each under its heading as CLI11 lists a plain app's
// groups (its own layout for option groups names them "[Option Group: ...]" and indents).
class GroupedHelp : public CLI::Formatter {
public:
    std::string make_expanded(const CLI::App* group) const override {
        return make_groups(group, CLI::AppFormatMode::Normal);
    }
};

// A heading of --help and the flags under it. CLI11 checks every new flag's names against
// each flag of its group before it, a cost quadratic in the group's size: with all of
// heapfold's flags in one, that check was a third of the instructions `heapfold --version`
// runs. Flags of other groups are named by their Option (`app.get_option`), not by name.
inline CLI::App& flag_group(CLI::App& app, const std::string& heading) {
    app.formatter(std::make_shared<GroupedHelp>());
    CLI::App& group = *app.add_option_group(heading);
    group.set_help_flag(); // the tool's own --help is enough
    group.option_defaults()->group(heading);
    return group;
}

// `sample_help` says what --sample chooses for this tool.
inline void add_common_flags(CLI::App& app, ToolOptions& options, const std::string& sample_help) {
    LoadOptions& load = options.request.load;
    SymbolizeOptions& symbols = load.symbols;
    FrameOptions& frames = options.view.folded.frames;
    app.add_option("DUMP", options.inputs,
                   "jemalloc heap_v2 dumps or jeprof symbolized profiles, plain or gzipped; "
                   "or one pprof profile (heap or CPU, any producer's; .pb.gz); '-' reads standard "
                   "input; several are merged (with --growth, a series); "
                   "or jemalloc's allocation log (prof_log: <prefix>.<pid>.<seq>.json) with a "
                   "dump of the same process for its map")
        ->required();
    app.add_option("-o,--output", options.output, "write here instead of standard output")
        ->option_text("FILE");
    CLI::App& input_flags = flag_group(app, "Input");
    CLI::App& frame_flags = flag_group(app, "Frames and stacks");
    CLI::App& name_flags = flag_group(app, "Names");
    input_flags
        .add_option("--base", options.bases,
                    "show the change from this earlier dump (repeatable: several are merged); "
                    "stacks meet by function names, so another run of the program compares")
        ->option_text("BASE")
        ->allow_extra_args(false);
    input_flags
        .add_option_function<std::string>(
            "--sample",
            [&load](const std::string& name) {
                load.sample = parse_sample_type(name).value_or(load.sample);
                load.sample_name = name;
                load.sample_given = true;
            },
            sample_help +
                ": inuse_space (default; alloc_space for an allocation log), inuse_objects, "
                "alloc_space, alloc_objects, temporary_objects, temporary_space, byte_seconds, "
                "cross_thread_objects, cross_thread_space (the last five: of an allocation log; "
                "temporary: freed within 1 ms; of a pprof profile: its own types by name (a CPU "
                "profile's samples or cpu; default: the profile's own)), fragmentation_space, "
                "fragmentation_objects (estimated with --stats; then fragmentation_space is the "
                "default)")
        ->option_text("TYPE");
    input_flags
        .add_option("--stats", load.stats,
                    "jemalloc's statistics (malloc_stats_print's JSON, option J, or text) of "
                    "the moment the one DUMP was written: charge each size class's free regions "
                    "in partly used slabs to the stacks with live objects in it, an estimate "
                    "(sample types fragmentation_space, fragmentation_objects); with --base, "
                    "give the base's with --base-stats")
        ->option_text("STATS");
    input_flags
        .add_option("--base-stats", options.request.base_stats,
                    "jemalloc's statistics of the moment the one BASE was written, as --stats "
                    "are of the DUMP's: the change of the estimated fragmentation")
        ->option_text("STATS")
        ->needs("--base");
    input_flags.add_flag("--free-sites", load.log_free_sites,
                         "of an allocation log: stacks where objects were freed, not allocated");
    input_flags
        .add_flag("--growth", options.request.series,
                  "the dumps are a series of one program (at least 3, oldest first by their "
                  "times): rank stacks by growth that persists")
        ->excludes("--base")
        ->excludes("--stats");
    input_flags.add_flag("--threads", load.per_thread, "split every stack by jemalloc thread");
    frame_flags.add_flag(
        "--keep-allocator-frames", frames.keep_allocator_frames,
        "keep malloc, operator new and jemalloc-internal frames, and the known "
        "allocation wrappers (zmalloc, isc__mem_get, g_malloc, PyMem_Malloc, ...), "
        "and the C++ and Rust standard libraries' frames at a stack's leaf end "
        "(std::vector<T>::_M_default_append, alloc::raw_vec, ...)");
    frame_flags
        .add_option("--drop-frames", frames.drop_frames,
                    "cut frames whose whole function name matches REGEX, and all frames they "
                    "call (pprof's drop_frames)")
        ->option_text("REGEX")
        ->check(regex_validator());
    frame_flags
        .add_option("--focus", options.request.stacks.focus,
                    "keep only stacks through a frame whose name (as shown: unnamed ones as "
                    "module!0xSTART or module+0xOFFSET) matches REGEX")
        ->option_text("REGEX")
        ->check(regex_validator());
    frame_flags
        .add_option("--ignore", options.request.stacks.ignore,
                    "leave out stacks through a frame whose name (as shown) matches REGEX")
        ->option_text("REGEX")
        ->check(regex_validator());
    frame_flags
        .add_option("--hide", options.request.stacks.hide,
                    "take frames whose name (as shown) matches REGEX out of every stack, "
                    "keeping their callers and callees (pprof's -hide)")
        ->option_text("REGEX")
        ->check(regex_validator());
    frame_flags.add_flag_callback(
        "--keep-clone-suffixes", [&frames] { frames.merge_clones = false; },
        "show GCC's copies of a function (f.part.0, f.constprop.0, f.cold) apart from it");
    name_flags.add_flag_callback(
        "--no-symbolize", [&symbols] { symbols.names = false; },
        "leave frames unnamed (addresses, mappings and build ids only)");
    name_flags
        .add_option("--binary", symbols.main_binary,
                    "the program's executable, wherever the dump says it was")
        ->option_text("PATH")
        ->transform(absolute_path);
    name_flags
        .add_option("--sysroot", symbols.sysroot,
                    "look for every mapped file under DIR (a container's or host's root)")
        ->option_text("DIR")
        ->transform(absolute_path);
    name_flags
        .add_option_function<std::vector<std::string>>(
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
    name_flags
        .add_option("--debug-dir", symbols.debug_dirs,
                    "also look for debug files under DIR, in the layouts of /usr/lib/debug "
                    "(repeatable)")
        ->option_text("DIR")
        ->transform(absolute_path)
        ->allow_extra_args(false);
    name_flags.add_flag_callback(
        "--no-cache", [&options] { options.cache = false; },
        "neither read nor make address indexes ($HEAPKIT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)");
    name_flags
        .add_option_function<std::string>(
            "--index",
            [&options](const std::string& when) {
                options.index = when == "now"     ? NewIndexes::now
                                : when == "later" ? NewIndexes::later
                                                  : NewIndexes::none;
            },
            "when a build met without an address index gets one: later (default: "
            "named from its files now, while heapkit-index makes the index in the "
            "background for the next run), now (made in this run, then used), never")
        ->option_text("WHEN")
        ->check(CLI::IsMember({"later", "now", "never"}))
        ->envname("HEAPKIT_INDEX");
    input_flags
        .add_option("--max-inflated", load.max_inflated,
                    "the most a gzipped dump may inflate to (default 2GiB; suffixes k, M, G "
                    "are powers of 1024); more ends the run with an error naming the file, "
                    "as does, with the default, inflating past 64MiB to over 200 times the "
                    "compressed size")
        ->option_text("SIZE")
        ->envname("HEAPKIT_MAX_INFLATED")
        ->transform(CLI::AsSizeValue(false));
    app.add_flag("-q,--quiet", options.quiet, "no progress line and no warnings");
    app.add_flag("-v,--verbose", load.list_unnamed,
                 "say for each file why its addresses stayed without a name and how much of "
                 "the profile they hold, and list them (without it, the files without debug "
                 "information share one summary line)");
    app.add_flag("--strict", options.strict,
                 "exit with status 2 when any frame stays unnamed (output is still written); a "
                 "mapped file modified after the dump (maybe rebuilt) is not used for names");
    app.set_version_flag("--version", std::string(app.get_name()) + " (heapkit) " + version);
}

} // namespace heapkit::cmd
