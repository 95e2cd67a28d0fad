// SPDX-License-Identifier: MIT
// jeprof2pprof: jemalloc heap dumps -> gzipped pprof protobuf.
#include "../run.hpp"

int main(int argc, char** argv) {
    heapkit::ToolOptions options;
    options.view.kind = heapkit::ViewKind::pprof;
    heapkit::PprofOptions& pprof = options.view.pprof;
    CLI::App app("Convert jemalloc heap profiles to gzipped pprof (go tool pprof's format); "
                 "given one unsymbolized pprof profile (rust-jemalloc-pprof's, an exporter's), "
                 "name it in place, keeping all else it holds.",
                 "jeprof2pprof");
    heapkit::cmd::add_common_flags(app, options, "default sample type");
    app.add_option("--compress-level", pprof.compress_level,
                   "gzip level, 1 (fastest) to 9 (smallest), 0 stores; default 6")
        ->option_text("N")
        ->check(CLI::Range(0, 9));
    app.add_flag("--label-dumps", pprof.dump_labels,
                 "label every sample dump=<the file's base name> (go tool pprof -tags, "
                 "-tagfocus=dump=NAME)")
        ->excludes("--base");
    app.footer("Examples:\n"
               "  jeprof2pprof jeprof.1234.0.f.heap -o heap.pb.gz && go tool pprof -http=: "
               "heap.pb.gz\n"
               "  jeprof2pprof --growth jeprof.1234.*.i*.heap -o growth.pb.gz && "
               "go tool pprof -top -sample_index=growth growth.pb.gz\n"
               "  jeprof2pprof unsymbolized.pb.gz -o named.pb.gz && go tool pprof -top named.pb.gz");
    return heapkit::cmd::run(app, argc, argv, options);
}
