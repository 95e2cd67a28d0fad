// SPDX-License-Identifier: MIT
// heapfold: jemalloc heap dumps -> collapsed stacks for flamegraph.pl.
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

} // namespace

int main(int argc, char** argv) {
    heapkit::cmd::ToolOptions options;
    heapkit::FoldedOptions folded;
    CLI::App app("Fold jemalloc heap profiles into collapsed stacks (flamegraph.pl's input).",
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
    app.footer("Example: heapfold jeprof.1234.0.f.heap | flamegraph.pl --colors=mem "
               "--countname=bytes > heap.svg");
    return heapkit::cmd::run(
        app, argc, argv, options, [&](heapkit::Profile& profile, const heapkit::Profile* base) {
            folded.sample = options.load.sample;
            folded.frames = options.frames;
            folded.thread_frames = options.load.per_thread;
            return heapkit::write_output(options.output, false, [&](const heapkit::Sink& sink) {
                return base ? heapkit::write_folded_diff(*base, profile, folded, sink)
                            : heapkit::write_folded(profile, folded, sink);
            });
        });
}
