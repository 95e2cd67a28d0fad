// SPDX-License-Identifier: MIT
// run_tool (heapkit.hpp): how jeprof2pprof and heapfold run once their flags are read. The
// request completed as the tools fill it in (a directory stands for its dumps; the address
// cache and its background indexer; the progress line), one view written, warnings and
// errors printed as "<tool>: ...", and the exit status. What the user typed is read in cmd/.
#include "heapkit/heapkit.hpp"
#include "heapkit/load/name_pprof.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "heapkit/symbolize/index/detached_indexer.hpp"
#include "heapkit/util/huge_pages.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/regex.hpp"
#include "heapkit/util/terminal_text.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace heapkit {
namespace {

// The dumps a directory holds (the runtime's peak captures, a prof_prefix directory): its
// *.heap and *.heap.gz files that are not hidden, by name; empty for anything else.
std::vector<std::string> dumps_in_directory(const std::string& path) {
    std::vector<std::string> dumps;
    std::error_code error;
    if (path == "-" || !std::filesystem::is_directory(path, error)) {
        return dumps;
    }
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        std::string name = entry.path().filename().string();
        bool dump = name.ends_with(".heap") || name.ends_with(".heap.gz");
        if (dump && !name.starts_with(".") && entry.is_regular_file(error)) {
            dumps.push_back(entry.path().string());
        }
    }
    std::sort(dumps.begin(), dumps.end());
    return dumps;
}

// A directory stands for its dumps; one without any stays, for the loader's message.
std::vector<Input> inputs_of(const std::vector<std::string>& paths) {
    std::vector<Input> inputs;
    for (const std::string& path : paths) {
        std::vector<std::string> dumps = dumps_in_directory(path);
        if (dumps.empty()) {
            dumps.push_back(path);
        }
        for (std::string& dump : dumps) {
            inputs.push_back(Input{std::move(dump), std::nullopt});
        }
    }
    return inputs;
}

// What the flags leave to be filled in after parsing: the files, the cache, the progress
// line, and the view's frames and sample type, which loading chose. A cache directory
// others could write is not used: one line says so, and the tool runs on without it.
void complete(std::string_view tool, ToolOptions& options) {
    ViewRequest& request = options.request;
    request.inputs = inputs_of(options.inputs);
    request.bases = inputs_of(options.bases);
    if (options.cache) {
        std::string directory = default_cache_directory();
        if (auto usable = check_cache_directory(directory)) {
            SymbolizeOptions& symbols = request.load.symbols;
            symbols.cache_directory = directory;
            symbols.new_indexes = options.index;
            if (std::string indexer = sibling_indexer(); !indexer.empty()) {
                symbols.index_later = detached_index_builder(
                    {indexer, directory, symbols.debug_dirs, symbols.sysroot});
            }
        } else if (!options.quiet) {
            fmt::print(stderr, "{}: warning: {}\n", tool, usable.error().message);
        }
    }
    request.load.symbols.progress = !options.quiet && ::isatty(STDERR_FILENO);
    request.load.symbols.refuse_later_builds = options.strict;
    FoldedOptions& folded = options.view.folded;
    // The report shows the filters it was written with beside the ones applied in the page.
    std::pair<const char*, const std::string*> filters[] = {
        {"--focus", &request.stacks.focus},
        {"--ignore", &request.stacks.ignore},
        {"--hide", &request.stacks.hide},
        {"--drop-frames", &folded.frames.drop_frames}};
    for (auto [flag, pattern] : filters) {
        if (!pattern->empty()) {
            options.view.html.applied.push_back(fmt::format("{}={}", flag, *pattern));
        }
    }
    folded.sample = request.load.sample;
    folded.thread_frames = request.load.per_thread;
}

// A filter pattern that matches no frame cuts nothing, or everything: most likely a typo.
std::vector<std::string> unmatched_filters(const Views& views, const ToolOptions& options) {
    std::vector<std::string> lines;
    auto warn = [&](std::string_view flag, const std::string& pattern, std::string_view effect) {
        lines.push_back(fmt::format(
            "{} '{}' matches no frame{}: {} (frames are matched by their names as shown, "
            "and unnamed ones by their text, e.g. 'libfoo.so!0x1a20' or 'libfoo.so\\+0x1a2b')",
            flag, pattern, options.inputs.size() + options.bases.size() > 1 ? " of any dump" : "",
            effect));
    };
    if (!views.matched.focus) {
        warn("--focus", options.request.stacks.focus, "nothing is shown");
    }
    if (!views.matched.ignore) {
        warn("--ignore", options.request.stacks.ignore, "nothing is left out");
    }
    if (!views.matched.hide) {
        warn("--hide", options.request.stacks.hide, "nothing is hidden");
    }
    const std::string& drop = options.view.folded.frames.drop_frames;
    if (!drop.empty()) {
        bool matched =
            drop_frames_match(views.profile, drop) ||
            (views.base && drop_frames_match(*views.base, drop)) ||
            std::any_of(views.series.begin(), views.series.end(),
                        [&](const Profile& dump) { return drop_frames_match(dump, drop); });
        if (!matched) {
            warn("--drop-frames", drop, "nothing is cut (it must match a whole function name)");
        }
    }
    return lines;
}

// Wrappers the allocator list does not know, above most of the value or, without a
// name, called from many places: which --drop-frames would cut each. (Not when the
// allocator's frames are kept: then the leaf is malloc; nor for a series or a change.)
std::vector<std::string> wrapper_hint(const Views& views, const ToolOptions& options) {
    const FoldedOptions& folded = options.view.folded;
    if (folded.frames.keep_allocator_frames || !views.series.empty() || views.base) {
        return {};
    }
    auto hints = find_wrapper_hints(views.profile, folded);
    if (!hints) {
        return {};
    }
    std::string more =
        folded.frames.drop_frames.empty() ? std::string() : "|" + folded.frames.drop_frames;
    std::vector<std::string> lines;
    for (const WrapperHint& found : *hints) {
        if (found.unnamed) {
            lines.push_back(fmt::format(
                "{} is a function without a name that calls the allocator, under {:.0f}% of "
                "{} and called from {} places: most likely an allocation wrapper; "
                "--drop-frames '{}{}' cuts it so that its callers are the leaves",
                found.frame, found.share * 100, name_of(folded), found.callers, found.drop_frames,
                more));
        } else {
            lines.push_back(
                fmt::format("{} is the frame just above the allocator under {:.0f}% of {}, called "
                            "from {} places: if it only allocates for its callers, --drop-frames "
                            "'{}{}' cuts it so that they are the leaves",
                            found.frame, found.share * 100, name_of(folded), found.callers,
                            found.drop_frames, more));
        }
    }
    return lines;
}

// The end of a run: the error, or the warnings (each file's once, after the output);
// the exit status (run_tool says which).
int finish(std::string_view tool, const ToolOptions& options, const Result<void>& written,
           LoadReport report, const std::vector<std::string>& warnings) {
    // Messages name files and frames as the dump spells them: escaped like the views.
    if (!written) {
        fmt::print(stderr, "{}: error: {}\n", tool, terminal_safe(written.error().message));
        return 1;
    }
    if (!options.quiet) {
        std::vector<std::string> said = report.warnings;
        said.insert(said.end(), warnings.begin(), warnings.end());
        for (std::string& line : unnamed_warnings(report, options.request.load.list_unnamed,
                                                  options.request.load.symbols.cache_directory)) {
            said.push_back(std::move(line));
        }
        for (const std::string& warning : said) {
            fmt::print(stderr, "{}: warning: {}\n", tool, terminal_safe(warning));
        }
    }
    return options.strict && report.unnamed_locations > 0 ? 2 : 0;
}

// The view written; the exit status (run_tool says which). Warnings come last, each file's
// once for the whole command.
int show(std::string_view tool, const ToolOptions& given) {
    auto views = load_views(given.request);
    // An allocation log has nothing in use: its views default to what was allocated.
    ToolOptions options = given;
    if (views) {
        const LoadOptions& load = given.request.load;
        // load_views checked the choice; a series' dumps each had it checked, and share
        // their types (an estimate's too: each capture has its statistics beside it).
        const Profile& chosen_in = views->series.empty() ? views->profile : views->series.back();
        options.view.folded.sample = chosen_sample(chosen_in, load).value_or(load.sample);
    }
    std::vector<std::string> warnings;
    if (views && !options.quiet) {
        warnings = unmatched_filters(*views, options);
        for (std::string& line : wrapper_hint(*views, options)) {
            warnings.push_back(std::move(line));
        }
    }
    // The writer takes the views themselves, not a copy: a copy of the profile of a dump of
    // millions of stacks was as big as the profile, and set the command's peak memory.
    // Only the report is wanted afterwards, for the warnings.
    LoadReport report = views ? std::move(views->report) : LoadReport{};
    Result<void> written =
        views ? write_output(options.output, is_binary(options.view.kind),
                             [&](const Sink& sink) {
                                 return write_view(std::move(*views), options.view, sink);
                             })
              : tl::unexpected(views.error());
    return finish(tool, options, written, report, warnings);
}

// A lone pprof given to jeprof2pprof, with nothing asked that changes its samples: named
// in place (load/name_pprof.hpp), its labels, comments, sample types and times kept, which
// the views' way through the model does not. The exit status; none when the input is not
// such a pprof: then `held` keeps the text read, for the views (an input that cannot be
// opened again, such as standard input, is read once).
std::optional<int> name_lone_pprof(std::string_view tool, ToolOptions& options,
                                   std::optional<InputBuffer>& held) {
    ViewRequest& request = options.request;
    const FoldedOptions& folded = options.view.folded;
    bool changes_samples = request.inputs.size() != 1 || !request.bases.empty() || request.series ||
                           request.load.per_thread || request.load.sample_given ||
                           !request.stacks.focus.empty() || !request.stacks.ignore.empty() ||
                           !request.stacks.hide.empty() || !folded.frames.drop_frames.empty() ||
                           options.view.pprof.dump_labels || !request.load.stats.empty();
    if (options.view.kind != ViewKind::pprof || changes_samples) {
        return std::nullopt;
    }
    Input& input = request.inputs.front();
    auto buffer = InputBuffer::open(input.name, inflation_limit(request.load), looks_like_pprof);
    if (!buffer || !looks_like_pprof(buffer->text())) {
        if (buffer && buffer->held_in_memory()) { // read once: standard input, gzip
            held = std::move(*buffer);
            input = Input{held->name(), held->text(), held->modified_nanos()};
        }
        return std::nullopt; // the views' way says what is wrong with it
    }
    auto named =
        name_pprof(buffer->text(), buffer->name(), request.load, options.view.pprof.compress_level);
    Result<void> written =
        named ? write_output(options.output, true,
                             [&](const Sink& sink) { return sink(named->gzipped); })
              : tl::unexpected(named.error());
    return finish(tool, options, written, named ? named->report : LoadReport{}, {});
}

} // namespace

int run_tool(std::string_view tool, ToolOptions options) {
    allow_huge_heap_pages(); // the tool's own process, not a host's (util/huge_pages.hpp)
    complete(tool, options);
    std::optional<InputBuffer> held; // read once, for whichever way runs
    if (auto status = name_lone_pprof(tool, options, held)) {
        return *status;
    }
    return show(tool, options);
}

Result<void> check_pattern(std::string_view pattern) {
    HEAPKIT_TRY(Regex::compile(pattern));
    return {};
}

} // namespace heapkit
