// SPDX-License-Identifier: MIT
// heapfold: jemalloc heap dumps -> collapsed stacks for flamegraph.pl.
#include "../tool_main.hpp"

int main(int argc, char** argv) {
    heapkit::ToolOptions options;
    CLI::App app("Fold jemalloc heap profiles into collapsed stacks (flamegraph.pl's input).",
                 "heapfold");
    heapkit::cmd::add_common_flags(app, options, "value to print");
    app.add_option("--frame", options.frame,
                   "frame text: function (default), function+line (\"name (file.c:12)\"), "
                   "address (module+0xOFFSET)")
        ->option_text("STYLE");
    app.add_flag("--annotate-inline", options.annotate_inline,
                 "mark inlined frames with _[i] (flamegraph.pl colours them apart)");
    app.footer("Example: heapfold jeprof.1234.0.f.heap | flamegraph.pl --colors=mem "
               "--countname=bytes > heap.svg");
    return heapkit::cmd::run(app, argc, argv, options, heapkit::run_heapfold);
}
