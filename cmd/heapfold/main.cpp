// SPDX-License-Identifier: MIT
// heapfold: jemalloc heap dumps -> collapsed stacks for flamegraph.pl, or a flame graph.
#include "../run.hpp"

namespace {

std::optional<heapkit::FrameStyle> parse_frame_style(std::string_view text) {
    if (text == "function") {
        return heapkit::FrameStyle::function;
    }
    if (text == "function+line") {
        return heapkit::FrameStyle::function_line;
    }
    if (text == "address") {
        return heapkit::FrameStyle::address;
    }
    return std::nullopt;
}

// flamegraph.pl's options, under its names; they all need --svg.
CLI::Option* add_flame_flags(CLI::App& app, CLI::App& view_flags, heapkit::ViewOptions& view) {
    heapkit::FlameOptions& flame = view.flame;
    auto* svg = view_flags.add_flag_callback(
        "--svg", [&view] { view.kind = heapkit::ViewKind::flame_graph; },
        "draw an interactive SVG flame graph instead of printing the stacks");
    CLI::App& flame_flags = heapkit::cmd::flag_group(app, "Flame graph (with --svg)");
    flame_flags.add_option("--title", flame.title, "the graph's title (default: Flame Graph)")
        ->option_text("TEXT")
        ->needs(svg);
    flame_flags.add_option("--width", flame.width, "image width in pixels (default 1200)")
        ->option_text("PX")
        ->check(CLI::Range(heapkit::FlameOptions::min_width, 1000000u))
        ->needs(svg);
    flame_flags
        .add_option_function<std::string>(
            "--minwidth",
            [&flame](const std::string& text) { flame.minwidth = *heapkit::parse_min_width(text); },
            "leave out frames narrower than PX pixels or PCT% of the total (default 0.1)")
        ->option_text("PX|PCT%")
        ->check(heapkit::cmd::parsed_by(heapkit::parse_min_width, "minimum width",
                                        "pixels or a percentage below 100 such as 0.5%"))
        ->needs(svg);
    flame_flags
        .add_option("--countname", flame.countname,
                    "unit in frame titles (default: bytes, byte-seconds for byte_seconds, or "
                    "objects for the counts)")
        ->option_text("UNIT")
        ->needs(svg);
    flame_flags
        .add_option_function<std::string>(
            "--colors",
            [&flame](const std::string& text) { flame.colors = *heapkit::parse_palette(text); },
            "palette: mem (default), hot, io, red, green, blue, aqua, yellow, purple, orange")
        ->option_text("PALETTE")
        ->check(heapkit::cmd::parsed_by(heapkit::parse_palette, "palette",
                                        std::string(heapkit::palette_names())))
        ->needs(svg);
    // A flag's help would otherwise say "Needs: --svg" where options show their value.
    flame_flags.add_flag("--inverted", flame.inverted, "icicle graph: the root at the top")
        ->option_text(" ")
        ->needs(svg);
    flame_flags
        .add_flag("--reverse", flame.reverse,
                  "merge stacks from the allocating function (leaf) down")
        ->option_text(" ")
        ->needs(svg);
    return svg;
}

// heapfold's own flags: the frame text, and which view (--svg, --text; else the stacks).
void add_view_flags(CLI::App& app, heapkit::ToolOptions& options) {
    heapkit::ViewOptions& view = options.view;
    CLI::App& view_flags = heapkit::cmd::flag_group(app, "View");
    view_flags
        .add_option_function<std::string>(
            "--frame",
            [&view](const std::string& text) { view.folded.style = *parse_frame_style(text); },
            "frame text: function (default), function+line (\"name (file.c:12)\"), "
            "address (module+0xOFFSET)")
        ->option_text("STYLE")
        ->check(heapkit::cmd::parsed_by(parse_frame_style, "frame style",
                                        "function, function+line or address"));
    view_flags.add_flag("--annotate-inline", view.folded.annotate_inline,
                        "mark inlined frames with _[i] (flamegraph.pl colours them apart)");
    view_flags
        .add_flag("--label-dumps", view.folded.dump_frames,
                  "start every stack with a frame naming its dump (the file's base name), "
                  "before any thread frame")
        ->excludes(app.get_option("--base"));
    auto* svg = add_flame_flags(app, view_flags, view);
    auto* text = view_flags
                     .add_flag_callback(
                         "--text", [&view] { view.kind = heapkit::ViewKind::text; },
                         "print a table of functions (flat, flat%, sum%, cum, cum%) like jeprof "
                         "--text and go tool pprof -top")
                     ->excludes(svg);
    text->excludes(app.get_option("--growth"));
    view_flags
        .add_flag_callback(
            "--html", [&view] { view.kind = heapkit::ViewKind::html; },
            "write one self-contained interactive HTML page: every sample type, Top, flame "
            "graph, callers and callees, refinement (with --base: the change; with --growth: "
            "the totals over time with a window, and the suspects)")
        ->excludes(svg)
        ->excludes(text);
    view_flags
        .add_flag_callback(
            "--lifetimes", [&view] { view.kind = heapkit::ViewKind::lifetimes; },
            "of an allocation log: an SVG of how long objects lived (log-scale histograms, all "
            "sites and the --nodecount first, default 8, as --text ranks them)")
        ->excludes(svg)
        ->excludes(text)
        ->excludes("--html")
        ->excludes(app.get_option("--growth"));
    auto* node_count =
        view_flags
            .add_option_function<size_t>(
                "--nodecount",
                [&view](size_t count) {
                    view.text.node_count = view.growth.node_count = count;
                    view.lifetimes.site_count = count;
                },
                "list only the N functions with the largest flat values (default: all); with "
                "--growth, the N strongest suspects (default 10); with --lifetimes, the N first "
                "sites charted (default 8)")
            ->option_text("N")
            ->check(CLI::Validator(
                [](std::string& number) {
                    // Digits only: "-1", "0" and "1e9" once meant "all" without a word.
                    bool digits = !number.empty() &&
                                  number.find_first_not_of("0123456789") == std::string::npos;
                    return digits && number.find_first_not_of('0') != std::string::npos
                               ? std::string()
                               : fmt::format("takes a whole number from 1 up, not \"{}\" "
                                             "(leave it out for all)",
                                             number);
                },
                "N >= 1", "N"));
    app.final_callback([&options, node_count, text] {
        if (node_count->count() > 0 && text->count() == 0 && !options.request.series &&
            options.view.kind != heapkit::ViewKind::lifetimes) {
            throw CLI::ValidationError("--nodecount", "needs --text, --lifetimes or --growth");
        }
    });
}

} // namespace

int main(int argc, char** argv) {
    heapkit::ToolOptions options;
    CLI::App app("Fold jemalloc heap profiles into collapsed stacks (flamegraph.pl's input), "
                 "or draw them as a flame graph.",
                 "heapfold");
    heapkit::cmd::add_common_flags(app, options, "value to print");
    add_view_flags(app, options);
    app.footer("Examples:\n"
               "  heapfold --svg jeprof.1234.0.f.heap -o heap.svg\n"
               "  heapfold --base old.heap new.heap --svg -o grew.svg\n"
               "  heapfold --growth jeprof.1234.*.i*.heap\n"
               "  heapfold --html jeprof.1234.0.f.heap -o report.html\n"
               "  heapfold jeprof.1234.0.f.heap | flamegraph.pl --colors=mem --countname=bytes "
               "> heap.svg");
    return heapkit::cmd::run(app, argc, argv, options);
}
