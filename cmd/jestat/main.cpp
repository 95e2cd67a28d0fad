// SPDX-License-Identifier: MIT
// jestat: why is RSS bigger than the heap profile? jemalloc's statistics, reconciled.
#include "heapkit/stats/options.hpp"
#include "usage_error.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <new>

int main(int argc, char** argv) {
    heapkit::stats::JestatOptions options;
    CLI::App app("Explain a process's memory from jemalloc's statistics: from the heap "
                 "profile's in-use total through allocated, active, resident, mapped and "
                 "retained bytes to the RSS, each step with the knob that moves it.",
                 "jestat");
    app.add_option("STATS", options.stats,
                   "malloc_stats_print output: JSON (MALLOC_CONF=stats_print:true,"
                   "stats_print_opts:J) or text (redis' MEMORY MALLOC-STATS), found among a "
                   "program's other output; '-' reads standard input")
        ->required();
    app.add_option("--dump", options.dump,
                   "a heap profile of the same moment (heap_v2 dump or jeprof --raw): its "
                   "in-use total starts the waterfall, its sampled objects' pages a row of "
                   "their own")
        ->option_text("HEAP");
    app.add_option("--smaps", options.smaps,
                   "/proc/PID/smaps (or smaps_rollup) of the same moment: split the RSS into "
                   "jemalloc, thread stacks, other anonymous memory and file-backed pages")
        ->option_text("FILE");
    auto* json = app.add_flag_callback(
                        "--json", [&] { options.format = heapkit::stats::ReportFormat::json; },
                        "print JSON for machines instead of the table")
                     ->option_text(" "); // not "Excludes: --svg" where options show values
    app.add_flag_callback(
           "--svg", [&] { options.format = heapkit::stats::ReportFormat::svg; },
           "draw the waterfall as an SVG chart instead of the table")
        ->excludes(json)
        ->option_text(" ");
    app.add_option("-o,--output", options.output, "write here instead of standard output")
        ->option_text("FILE");
    app.set_version_flag("--version", std::string("jestat (heapkit) ") + heapkit::cmd::version);
    app.footer("Examples:\n"
               "  MALLOC_CONF=stats_print:true,stats_print_opts:J ./server 2> stats.json\n"
               "  jestat stats.json --dump jeprof.1234.0.f.heap --smaps smaps.txt\n"
               "  redis-cli MEMORY MALLOC-STATS > stats.txt; jestat stats.txt --svg -o rss.svg");
    try {
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& error) {
            return heapkit::cmd::usage_error(app, error);
        }
        auto done = heapkit::stats::run_jestat(options);
        if (!done) {
            fmt::print(stderr, "jestat: error: {}\n", done.error().message);
            return 1;
        }
        for (const std::string& note : *done) {
            fmt::print(stderr, "jestat: note: {}\n", note);
        }
        return 0;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "jestat: error: out of memory\n");
    } catch (const std::exception& error) {
        fmt::print(stderr, "jestat: error: {}\n", error.what());
    }
    return 1;
}
