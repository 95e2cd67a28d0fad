// SPDX-License-Identifier: MIT
// What the views show and how: frames, pprof, collapsed stacks, flame graphs, tables.
#pragma once

#include "heapkit/unsample/heap_values.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// What every view shows of a frame.
struct FrameOptions {
    bool keep_allocator_frames = false; // keep malloc, operator new and jemalloc internals
    // pprof's drop_frames: a regex (RE2's syntax) matched against whole function names
    // (argument lists removed); the rootmost matching frame and all leafward are cut.
    std::string drop_frames;
    // GCC's copies of a function (f.part.0, f.constprop.0, "[clone .cold]") shown as the
    // function itself; pprof keeps the symbol as it was as system_name.
    bool merge_clones = true;
};

// A CPU profile's sample types, samples/count and cpu/nanoseconds, in place of the heap's
// four: each sample's values given here rather than read from the heap values. No frame
// is cut as an allocator's: time spent in malloc is CPU time too.
struct CpuSampleTypes {
    int64_t period_nanos = 0;   // the period, in cpu/nanoseconds
    std::vector<int64_t> ticks; // per Profile::samples entry: samples/count
    std::vector<int64_t> nanos; // per Profile::samples entry: cpu/nanoseconds
};

struct PprofOptions {
    SampleType default_type = SampleType::inuse_space;
    FrameOptions frames;               // drop_frames goes into the profile's drop_frames field
    int compress_level = 6;            // zlib level for the gzip wrapper, 0-9
    std::vector<std::string> comments; // added after the "source: ..." comments
    // A string label "dump" on every sample naming the dump it came from: the file's base
    // name, or the whole name where two dumps share a base name.
    bool dump_labels = false;
    // Set: a CPU profile, as Go writes one, not a heap profile.
    std::optional<CpuSampleTypes> cpu;
    // The key of the label Profile::thread_labels give the samples ("bin" where they say a
    // size class and arena).
    std::string thread_label_key = "thread";
};

// What one frame of a collapsed stack says.
enum class FrameStyle {
    function,      // "name"
    function_line, // "name (file.c:12)"
    address,       // "module+0xOFFSET", one frame per address (inline chains not expanded)
};

struct FoldedOptions {
    SampleType sample = SampleType::inuse_space;
    // How the views name `sample` and its unit, when a pprof names it ("samples",
    // "count"; write_view sets them from the profile); empty: name_of and unit_of.
    std::string sample_name;
    std::string sample_unit;
    FrameOptions frames;
    bool thread_frames = false; // prefix each stack with its thread's label
    FrameStyle style = FrameStyle::function;
    bool annotate_inline = false; // suffix inlined frames with "_[i]" (flamegraph.pl's mark)
    // Prefix each stack with a frame naming its dump (named as PprofOptions::dump_labels
    // names it), before the thread frame.
    bool dump_frames = false;
};

// `folded.sample`'s name and unit as the views say them.
inline std::string_view name_of(const FoldedOptions& folded) {
    return folded.sample_name.empty() ? name_of(folded.sample) : folded.sample_name;
}
inline std::string_view unit_of(const FoldedOptions& folded) {
    return folded.sample_unit.empty() ? unit_of(folded.sample) : folded.sample_unit;
}

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
    std::string title; // "" for "Flame Graph" ("Icicle Graph" when inverted)
    // A line under the title, as flamegraph.pl's --subtitle; "" for none. Drawn from a
    // profile, its notes (Profile::notes) when none is given.
    std::string subtitle;
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

struct LifetimeOptions {
    size_t site_count = 8; // sites charted below the one for all; 0: all
    unsigned width = 1200; // px
};

// The HTML report (report/report.hpp).
struct HtmlOptions {
    std::string title; // "" for "heapkit: " and the first input's name
    // The filters applied before the report was written, as the command line gave them
    // ("--focus=REGEX"): the page shows them beside its own.
    std::vector<std::string> applied;
    // Excerpts of the source files the frames name, read where the report is written.
    bool source_excerpts = true;
    // A page served live (the runtime's /debug/pprof/ui): the process and the moment its
    // heap was captured, said instead of the inputs' names, with a control to capture
    // it again.
    struct Capture {
        int64_t unix_millis = 0; // when the dump was taken
        int64_t pid = 0;
        std::string program; // the executable's file name
    };
    std::optional<Capture> capture;
};

struct TextOptions {
    size_t node_count = 0; // functions listed, largest flat first; 0: all
    // Said on the header line after the totals: a final dump's note (load/final_dump.hpp).
    std::string header_note;
};

} // namespace heapkit
