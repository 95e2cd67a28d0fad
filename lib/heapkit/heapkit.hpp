// SPDX-License-Identifier: MIT
// heapkit's front door: load jemalloc heap dumps into one Profile, then write it out.
//
//   auto loaded = heapkit::load_profile(inputs, options);     // read, unsample, symbolize
//   auto bytes = heapkit::write_pprof(loaded->profile, {});   // gzipped pprof
//   heapkit::write_folded(loaded->profile, {}, sink);         // collapsed stacks
//
// Every function here reports failure as an Error; none throws.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/unsample/heap_values.hpp"
#include "heapkit/util/error.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// One dump to load: a jemalloc heap_v2 dump or a jeprof symbolized profile, plain or
// gzipped.
struct Input {
    std::string name; // the file to read ("-": standard input), or a name for messages
    std::optional<std::string_view> bytes; // the dump already in memory (borrowed for the
                                           // call): `name` is then not opened
};

// `from` -> `to` for file paths that begin with the whole path components of `from` (a
// dump taken in a container or on another host names files where they were there).
struct PathRewrite {
    std::string from;
    std::string to;
};

class KeptSymbols; // symbolize/kept_symbols.hpp

// Where binaries and debug information are, and whether to look at all.
struct SymbolizeOptions {
    bool names = true;                   // false: read build ids only, name nothing
    std::vector<std::string> debug_dirs; // extra roots with /usr/lib/debug's layouts
    std::string sysroot;                 // prefix for every path no rewrite matched
    std::vector<PathRewrite> path_map;   // the longest matching `from` wins
    std::string main_binary;             // the program's executable, wherever the dump says
    bool progress = false;               // report progress on stderr
    std::string cache_directory;         // where named frames are remembered; empty: nowhere
    std::shared_ptr<KeptSymbols> kept;   // files and answers kept between calls; null: none
};

// For a long-running process that symbolizes again and again (the runtime serves many
// profiles of one process): each file opened once and kept (opened again when it changes
// on disk), and up to `max_frames` answers remembered in memory, for calls whose options
// name the same debug directories and sysroot as `options`. Over `max_files` files or
// `max_frames` answers, what is kept is dropped and found afresh. Calls sharing one take
// turns.
std::shared_ptr<KeptSymbols> make_kept_symbols(const SymbolizeOptions& options,
                                               size_t max_frames = size_t{1} << 20,
                                               size_t max_files = 1024);

// What a KeptSymbols holds and has saved, for telemetry.
struct KeptSymbolsStats {
    size_t files = 0;   // files held open now
    size_t frames = 0;  // addresses whose answers are kept now
    size_t opened = 0;  // files opened, over its life
    size_t hits = 0;    // lookups answered from memory
    size_t misses = 0;  // lookups that went to the file (or the frame cache)
    size_t dropped = 0; // times the bounds were reached and all was dropped
};
KeptSymbolsStats kept_symbols_stats(KeptSymbols& kept);

struct LoadOptions {
    SampleType sample = SampleType::inuse_space; // checked: alloc_* need prof_accum:true
    bool per_thread = false;                     // one sample per (stack, thread)
    SymbolizeOptions symbols;
    bool list_unnamed = false; // the report lists every address left without a name
};

// Why no file names a module's frames.
enum class FileProblem {
    none,               // a file was used
    not_a_file,         // a pseudo mapping such as [vdso]
    missing,            // none could be opened where it was looked for
    other_build,        // its code does not map as the dump's mapping
    other_architecture, // built for another machine than the program
};

// What symbolization made of one file the dump maps (its mappings in every dump
// together), for a summary of what stayed unnamed and what would name it.
struct ModuleReport {
    std::string path;     // as the dump names it
    std::string build_id; // of the file used, when one was and has one
    FileProblem problem = FileProblem::none;
    std::string problem_text;      // the problem as a sentence naming the file looked at
    bool has_symtab = false;       // .symtab (or .gnu_debugdata) in the file or its debug file
    bool has_dynsym = false;       // exported symbols (.dynsym) only, where no .symtab
    bool has_debug_info = false;   // DWARF, in the file or a separate debug file
    std::string package;           // the Debian package that installed it, when known
    size_t addresses = 0;          // its distinct addresses that stacks run through
    std::vector<uint64_t> offsets; // their file offsets, ascending
    // File offsets of those left without a name, ascending (jemalloc's own stripped
    // internals aside: they are cut from stacks anyway).
    std::vector<uint64_t> unnamed;
    // ELF vaddrs where the functions holding them start, ascending, for those its
    // call-frame information places (frames shown as "<file>!0x<start>").
    std::vector<uint64_t> unnamed_functions;
};

// What loading could not do, for the user: nothing here stops the profile from being used.
struct LoadReport {
    std::vector<std::string> warnings; // one line each, without a "warning:" prefix
    size_t unnamed_locations = 0;      // locations left without a name (allocator aside)
    // Per file the dumps map, what stayed unnamed and why (unnamed_warnings() says it),
    // and the runtime addresses in no mapping.
    std::vector<ModuleReport> modules;
    std::vector<uint64_t> unmapped;
};

// `more` (what loading other dumps said: the --base dumps, a series' next dump) added to
// `into`: each warning once, each file's addresses together; unnamed_locations summed.
void merge_report(LoadReport& into, LoadReport more);

// What stayed unnamed, one line per file (no "warning:" prefix): how many of its addresses,
// what the file lacks, and where its debug file is to be had (its Debian package's
// -dbgsym, found with dpkg-query; DEBUGINFOD_URLS). `list_addresses`: each unnamed address
// on a line of its own too. Meant once per command, after all its dumps are loaded.
std::vector<std::string> unnamed_warnings(LoadReport& report, bool list_addresses);

struct Loaded {
    Profile profile;
    LoadReport report;
};

// read -> unsample -> model -> symbolize: the dumps merged into one profile, each dump's
// addresses placed in its own mappings, frames named from DWARF or symbol tables.
Result<Loaded> load_profile(std::span<const Input> inputs, const LoadOptions& options);

// The frame cache's usual place: $HEAPKIT_CACHE_DIR, else $XDG_CACHE_HOME/heapkit, else
// ~/.cache/heapkit; empty when none can be named.
std::string default_cache_directory();

// Where output goes, a piece at a time; the first error stops the writer.
using Sink = std::function<Result<void>(std::string_view)>;

// What every view shows of a frame.
struct FrameOptions {
    bool keep_allocator_frames = false; // keep malloc, operator new and jemalloc internals
    // pprof's drop_frames: an ECMAScript regex matched against whole function names
    // (argument lists removed); the rootmost matching frame and all leafward are cut.
    std::string drop_frames;
    // GCC's copies of a function (f.part.0, f.constprop.0, "[clone .cold]") shown as the
    // function itself; pprof keeps the symbol as it was as system_name.
    bool merge_clones = true;
};

struct PprofOptions {
    SampleType default_type = SampleType::inuse_space;
    FrameOptions frames;               // drop_frames goes into the profile's drop_frames field
    int compress_level = 6;            // zlib level for the gzip wrapper, 0-9
    std::vector<std::string> comments; // added after the "source: ..." comments
    // A string label "dump" on every sample naming the dump it came from: the file's base
    // name, or the whole name where two dumps share a base name.
    bool dump_labels = false;
    // Above 0: a CPU profile, as Go writes one. Each sample's inuse_objects are its ticks
    // and inuse_space its CPU nanoseconds; the sample types are samples/count and
    // cpu/nanoseconds, the period this many cpu/nanoseconds. No frame is cut as an
    // allocator's: time spent in malloc is CPU time too.
    int64_t cpu_period_nanos = 0;
};

// The profile as a gzipped perftools.profiles.Profile: what `go tool pprof` reads.
Result<std::string> write_pprof(const Profile& profile, const PprofOptions& options);

// What one frame of a collapsed stack says.
enum class FrameStyle {
    function,      // "name"
    function_line, // "name (file.c:12)"
    address,       // "module+0xOFFSET", one frame per address (inline chains not expanded)
};

struct FoldedOptions {
    SampleType sample = SampleType::inuse_space;
    FrameOptions frames;
    bool thread_frames = false; // prefix each stack with its thread's label
    FrameStyle style = FrameStyle::function;
    bool annotate_inline = false; // suffix inlined frames with "_[i]" (flamegraph.pl's mark)
    // Prefix each stack with a frame naming its dump (named as PprofOptions::dump_labels
    // names it), before the thread frame.
    bool dump_frames = false;
};

// Collapsed stacks as flamegraph.pl reads them: one line per distinct stack, root first,
// frames joined by ';', a space, the integer value. Identical stacks are summed, zero
// totals left out, lines sorted bytewise so the output is deterministic. Allocator frames
// (and drop_frames) are cut as jeprof cuts them: the rootmost match and all leafward.
// The output goes to
// `sink` in pieces of about a megabyte.
Result<void> write_folded(const Profile& profile, const FoldedOptions& options, const Sink& sink);
// The same output as one string.
Result<std::string> write_folded(const Profile& profile, const FoldedOptions& options);

// Whether `drop_frames` (FrameOptions') matches the whole simplified name of some frame
// of `profile`, or the address text of a location without a name: a pattern that matches
// nothing cuts nothing, most likely a typo. False for an invalid regex too.
bool drop_frames_match(const Profile& profile, const std::string& drop_frames);

// A program's own allocation wrapper the allocator list does not know: the frame just
// above the allocator under most of the bytes, reached from several callers. Naming it
// with the --drop-frames that cuts it turns "98 % in xyz_alloc" into the callers that
// asked for the memory.
struct WrapperHint {
    std::string frame;       // the leaf frame's text, as write_folded spells it
    std::string drop_frames; // a drop_frames regex matching that function's whole name
    double share = 0;        // of all of the sample type's (absolute) value, 0..1
    size_t callers = 0;      // distinct frames just above it
};

// The leaf of write_folded(profile, options)'s stacks holding over half of the value,
// when it is reached from at least two distinct callers; nullopt otherwise.
Result<std::optional<WrapperHint>> find_wrapper_hint(const Profile& profile,
                                                     const FoldedOptions& options);

// Two profiles' collapsed stacks side by side, as difffolded.pl writes them: one line per
// stack in either, "stack BEFORE AFTER" (0 where a side lacks it), sorted by stack.
// flamegraph.pl draws such lines as a differential graph. Stacks meet by their spelled
// frames, so dumps of two runs (different addresses) compare.
Result<void> write_folded_diff(const Profile& before, const Profile& after,
                               const FoldedOptions& options, const Sink& sink);

// Colour schemes of a flame graph, named as flamegraph.pl's --colors names them.
enum class Palette { mem, hot, io, red, green, blue, aqua, yellow, purple, orange };

std::optional<Palette> parse_palette(std::string_view name);
// "mem, hot, io, ..." for messages.
std::string_view palette_names();

// Frames narrower than this are left out of the drawing (their parent's box still holds
// their share): in pixels, or in percent of the total.
struct MinWidth {
    double value = 0.1;
    bool percent = false;
};

// "0.1" (pixels) or "0.5%"; nullopt for anything else, negatives included.
std::optional<MinWidth> parse_min_width(std::string_view text);

// How a flame graph is drawn. The names are flamegraph.pl's options.
struct FlameOptions {
    std::string title;     // "" for "Flame Graph" ("Icicle Graph" when inverted)
    unsigned width = 1200; // of the image, pixels; at least min_width
    MinWidth minwidth;
    // The unit in each frame's title; "" for "bytes" (for a profile: "bytes" or
    // "objects", as its sample type counts).
    std::string countname;
    Palette colors = Palette::mem;
    bool inverted = false; // icicle graph: the root at the top
    // How folded text is read (flame_input()): stacks merged from the leaf; lines with
    // two counts, "stack before after".
    bool reverse = false;
    bool differential = false;
    // The lines come sorted bytewise (as write_folded writes them): frames too narrow to
    // draw are dropped while reading, which keeps a million stacks' graph small.
    bool sorted = false;

    static constexpr unsigned min_width = 100;
};

// The profile's collapsed stacks, as write_folded() makes them with `folded`, drawn as a
// standalone interactive SVG flame graph (flamegraph.pl's conventions: a root "all", a
// <title> "NAME (N UNIT, P%)" per frame; hover, click to zoom, Ctrl-F to search).
Result<void> write_flame_graph(const Profile& profile, const FoldedOptions& folded,
                               FlameOptions options, const Sink& sink);

// The differential flame graph of write_folded_diff's lines: widths are after's, colours
// the change (red grew, blue shrank), as flamegraph.pl draws difffolded.pl's output.
Result<void> write_flame_graph_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, FlameOptions options,
                                    const Sink& sink);

struct TextOptions {
    size_t node_count = 0; // functions listed, largest flat first; 0: all
};

// A table like `jeprof --text` and `go tool pprof -top`: per function, flat (the value
// of the stacks ending in it), flat%, sum% (running), cum (the stacks through it, each
// counted once however often the function recurs in it) and cum%, sorted by flat. Frames
// are the ones write_folded spells, so every view names the same functions.
Result<void> write_text_report(const Profile& profile, const FoldedOptions& folded,
                               const TextOptions& options, const Sink& sink);

// The same table of after - before (write_folded_diff's change): flat and cum are
// changes, sorted by their size; percentages are of the total change.
Result<void> write_text_report_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, const TextOptions& options,
                                    const Sink& sink);

// A series: dumps of one program over time (prof_interval's jeprof.<pid>.<seq>.i<n>.heap,
// prof.dump's, dumps of several runs), each loaded on its own, oldest first.
struct LoadedSeries {
    std::vector<Profile> dumps;
    LoadReport report; // what loading said of all of them, each line once; the unnamed
                       // locations of the dump that left the most
};

// load_profile for each input apart, then in the order they were written: by the files'
// modification times, ties broken by jemalloc's sequence number in the file name (the
// order given when some time is unknown: standard input, memory). An error for fewer than
// 3 dumps, a file given twice, or dumps of different programs (the main executables'
// build ids differ).
Result<LoadedSeries> load_series(std::span<const Input> inputs, const LoadOptions& options);

struct GrowthOptions {
    size_t node_count = 10; // suspects listed, and drawn in the chart; 0: all (chart: 10)
};

// Leak suspects of a series (load_series' dumps, oldest first): every stack, spelled as
// write_folded spells it with `folded` (so that stacks of runs with other addresses
// meet), followed through the dumps. A run is one process: a new one begins where the pid
// in jemalloc's file names or the main executable's load address changes, and each run
// has its own intercept in a least-squares line with one slope. Stacks are ranked by
// growth that persists: those that grew and whose value never fell within a run first,
// then the rest; within each, by the slope over the later half of each run times R^2 of
// the whole fit (per second when the dumps' times differ, else per dump), so that a
// cache that filled and stayed flat, or a batch that rose and fell back, ranks below
// steady growth.
//
// The table lists the top options.node_count: persistent growth, slope per second and
// per dump, R^2, first and last value, whether monotonic, the allocating frame (the
// leaf-most frame left after the allocator frames are cut) with its file:line, and the
// stack.
Result<void> write_growth_report(std::span<const Profile> dumps, const FoldedOptions& folded,
                                 const GrowthOptions& options, const Sink& sink);

// One standalone SVG: a chart of the top suspects' values over time (a line each, a
// legend naming their allocating frames, axes in bytes or objects and in seconds or
// dumps), above the flame graph of the last dump whose frames are coloured by the
// persistent growth of the stacks through them (red grows, blue shrinks).
Result<void> write_growth_graph(std::span<const Profile> dumps, const FoldedOptions& folded,
                                const GrowthOptions& options, FlameOptions flame, const Sink& sink);

// The last dump as a gzipped pprof with two more sample types: "growth" (the ranking's
// persistent growth) and "slope" (the least-squares slope), in bytes (or objects) per
// second, per dump when the dumps' times do not differ, of options.default_type. A
// stack's growth is shared among the last dump's samples that spell it, in proportion to
// their values; stacks with nothing in use in the last dump carry none.
Result<std::string> write_growth_pprof(std::span<const Profile> dumps, const PprofOptions& options);

// Runs `produce` with a sink into `path` ("" or "-": standard output) and keeps what it
// wrote only when it succeeds: a file is written beside its target and renamed into
// place, so a failure leaves the target untouched. `binary` output is refused on a
// terminal.
Result<void> write_output(const std::string& path, bool binary,
                          const std::function<Result<void>(const Sink&)>& produce);

} // namespace heapkit
