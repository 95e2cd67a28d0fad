// SPDX-License-Identifier: MIT
// jeprof2pprof: jemalloc heap dumps -> gzipped pprof protobuf.
#include "../tool_main.hpp"

int main(int argc, char** argv) {
    heapkit::cmd::ToolOptions options;
    heapkit::PprofOptions pprof;
    CLI::App app("Convert jemalloc heap profiles to gzipped pprof (go tool pprof's format).",
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
               "go tool pprof -top -sample_index=growth growth.pb.gz");
    auto write_series = [&](std::vector<heapkit::Profile>& dumps) {
        pprof.default_type = options.load.sample;
        pprof.frames = options.frames;
        return heapkit::write_output(options.output, true, [&](const heapkit::Sink& sink) {
            auto bytes = heapkit::write_growth_pprof(dumps, pprof);
            return bytes ? sink(*bytes) : tl::unexpected(bytes.error());
        });
    };
    return heapkit::cmd::run(
        app, argc, argv, options,
        [&](heapkit::Profile& profile, const heapkit::Profile* base) {
            if (base != nullptr) {
                if (auto subtracted = heapkit::subtract_base(profile, *base); !subtracted) {
                    return subtracted;
                }
            }
            pprof.default_type = options.load.sample;
            pprof.frames = options.frames;
            return heapkit::write_output(options.output, true, [&](const heapkit::Sink& sink) {
                auto bytes = heapkit::write_pprof(profile, pprof);
                return bytes ? sink(*bytes) : tl::unexpected(bytes.error());
            });
        },
        write_series);
}
