// SPDX-License-Identifier: MIT
// heapfold: jemalloc heap dumps -> collapsed stacks for flamegraph.pl, or a flame graph.
#include "../tool_main.hpp"

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
void add_flame_flags(CLI::App& app, bool& draw, heapkit::FlameOptions& flame) {
    auto* svg = app.add_flag("--svg", draw,
                             "draw an interactive SVG flame graph instead of printing the stacks");
    std::string group = "Flame graph (with --svg)";
    app.add_option("--title", flame.title, "the graph's title (default: Flame Graph)")
        ->option_text("TEXT")
        ->needs(svg)
        ->group(group);
    app.add_option("--width", flame.width, "image width in pixels (default 1200)")
        ->option_text("PX")
        ->check(CLI::Range(heapkit::FlameOptions::min_width, 1000000u))
        ->needs(svg)
        ->group(group);
    app.add_option_function<std::string>(
           "--minwidth",
           [&flame](const std::string& text) { flame.minwidth = *heapkit::parse_min_width(text); },
           "leave out frames narrower than PX pixels or PCT% of the total (default 0.1)")
        ->option_text("PX|PCT%")
        ->check(heapkit::cmd::parsed_by(heapkit::parse_min_width, "minimum width",
                                        "pixels or a percentage such as 0.5%"))
        ->needs(svg)
        ->group(group);
    app.add_option("--countname", flame.countname,
                   "unit in frame titles (default: bytes, or objects for the *_objects samples)")
        ->option_text("UNIT")
        ->needs(svg)
        ->group(group);
    app.add_option_function<std::string>(
           "--colors",
           [&flame](const std::string& text) { flame.colors = *heapkit::parse_palette(text); },
           "palette: mem (default), hot, io, red, green, blue, aqua, yellow, purple, orange")
        ->option_text("PALETTE")
        ->check(heapkit::cmd::parsed_by(heapkit::parse_palette, "palette",
                                        std::string(heapkit::palette_names())))
        ->needs(svg)
        ->group(group);
    // A flag's help would otherwise say "Needs: --svg" where options show their value.
    app.add_flag("--inverted", flame.inverted, "icicle graph: the root at the top")
        ->option_text(" ")
        ->needs(svg)
        ->group(group);
    app.add_flag("--reverse", flame.reverse,
                 "merge stacks from the allocating function (leaf) down")
        ->option_text(" ")
        ->needs(svg)
        ->group(group);
}

} // namespace

int main(int argc, char** argv) {
    heapkit::cmd::ToolOptions options;
    heapkit::FoldedOptions folded;
    bool draw = false;
    heapkit::FlameOptions flame;
    bool table = false;
    heapkit::TextOptions text;
    CLI::App app("Fold jemalloc heap profiles into collapsed stacks (flamegraph.pl's input), "
                 "or draw them as a flame graph.",
                 "heapfold");
    heapkit::cmd::add_common_flags(app, options, "value to print");
    app.add_option_function<std::string>(
           "--frame", [&](const std::string& text) { folded.style = *parse_frame_style(text); },
           "frame text: function (default), function+line (\"name (file.c:12)\"), "
           "address (module+0xOFFSET)")
        ->option_text("STYLE")
        ->check(heapkit::cmd::parsed_by(parse_frame_style, "frame style",
                                        "function, function+line or address"));
    app.add_flag("--annotate-inline", folded.annotate_inline,
                 "mark inlined frames with _[i] (flamegraph.pl colours them apart)");
    app.add_flag("--label-dumps", folded.dump_frames,
                 "start every stack with a frame naming its dump (the file's base name), "
                 "before any thread frame")
        ->excludes("--base");
    add_flame_flags(app, draw, flame);
    auto* text_flag = app.add_flag("--text", table,
                                   "print a table of functions (flat, flat%, sum%, cum, cum%) "
                                   "like jeprof --text and go tool pprof -top")
                          ->excludes("--svg");
    text_flag->excludes("--growth");
    auto* node_count =
        app.add_option("--nodecount", text.node_count,
                       "list only the N functions with the largest flat values (default: all); "
                       "with --growth, the N strongest suspects (default 10)")
            ->option_text("N")
            ->check(CLI::Validator(
                [](std::string& text) {
                    // Digits only: "-1", "0" and "1e9" once meant "all" without a word.
                    bool digits =
                        !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
                    return digits && text.find_first_not_of('0') != std::string::npos
                               ? std::string()
                               : fmt::format("takes a whole number from 1 up, not \"{}\" "
                                             "(leave it out for all)",
                                             text);
                },
                "N >= 1", "N"));
    app.final_callback([&] {
        if (node_count->count() > 0 && !table && !options.growth) {
            throw CLI::ValidationError("--nodecount", "needs --text or --growth");
        }
    });
    app.footer("Examples:\n"
               "  heapfold --svg jeprof.1234.0.f.heap -o heap.svg\n"
               "  heapfold --base old.heap new.heap --svg -o grew.svg\n"
               "  heapfold --growth jeprof.1234.*.i*.heap\n"
               "  heapfold jeprof.1234.0.f.heap | flamegraph.pl --colors=mem --countname=bytes "
               "> heap.svg");
    auto configure = [&] {
        folded.sample = options.load.sample;
        folded.frames = options.frames;
        folded.thread_frames = options.load.per_thread;
    };
    auto write_series = [&](std::vector<heapkit::Profile>& dumps) {
        configure();
        heapkit::GrowthOptions growth;
        if (node_count->count() > 0) {
            growth.node_count = text.node_count;
        }
        return heapkit::write_output(options.output, false, [&](const heapkit::Sink& sink) {
            return draw ? heapkit::write_growth_graph(dumps, folded, growth, flame, sink)
                        : heapkit::write_growth_report(dumps, folded, growth, sink);
        });
    };
    return heapkit::cmd::run(
        app, argc, argv, options,
        [&](heapkit::Profile& profile, const heapkit::Profile* base) {
            configure();
            return heapkit::write_output(options.output, false, [&](const heapkit::Sink& sink) {
                if (table) {
                    return base
                               ? heapkit::write_text_report_diff(*base, profile, folded, text, sink)
                               : heapkit::write_text_report(profile, folded, text, sink);
                }
                if (draw) {
                    return base ? heapkit::write_flame_graph_diff(*base, profile, folded, flame,
                                                                  sink)
                                : heapkit::write_flame_graph(profile, folded, flame, sink);
                }
                return base ? heapkit::write_folded_diff(*base, profile, folded, sink)
                            : heapkit::write_folded(profile, folded, sink);
            });
        },
        write_series);
}
