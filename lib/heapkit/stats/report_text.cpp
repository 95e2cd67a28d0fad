// SPDX-License-Identifier: MIT
#include "heapkit/stats/report_text.hpp"

#include "heapkit/emit/quantity.hpp"

#include <fmt/format.h>

namespace heapkit::stats {
namespace {

std::string describe(const JemallocStats& stats, std::string_view source) {
    return fmt::format("{}: jemalloc {} ({}); page {} bytes; {} arenas, {} in use; background "
                       "threads {}; dirty_decay_ms {}, muzzy_decay_ms {}\n",
                       source, stats.version.empty() ? "(version not printed)" : stats.version,
                       stats.format == "json" ? "JSON" : "text", stats.page, stats.narenas,
                       stats.arenas_in_use, stats.background_thread ? "on" : "off",
                       stats.dirty_decay_ms, stats.muzzy_decay_ms);
}

// Wraps `text` at `width` columns, each line after the first indented by `indent`.
std::string wrap(std::string_view text, size_t width, size_t indent) {
    std::string out;
    size_t column = 0;
    while (!text.empty()) {
        size_t space = text.find(' ');
        std::string_view word = text.substr(0, space);
        if (column > 0 && column + 1 + word.size() > width) {
            out += "\n" + std::string(indent, ' ');
            column = 0;
        } else if (column > 0) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    }
    return out;
}

void rows_table(std::string& out, const std::vector<Row>& rows) {
    constexpr size_t indent = 50;
    for (const Row& row : rows) {
        std::string sign = row.subtotal ? "" : (row.bytes < 0 ? "- " : "+ ");
        int64_t magnitude = row.bytes < 0 ? -row.bytes : row.bytes;
        out += fmt::format("  {:<34}{:>12}  ", (row.subtotal ? "" : "  ") + row.label,
                           sign + quantity(magnitude, true));
        out += wrap(row.what, 110 - indent, indent) + "\n";
        if (!row.knob.empty()) {
            out += std::string(indent, ' ') + wrap("knob: " + row.knob, 110 - indent, indent + 6) +
                   "\n";
        }
    }
}

void bins_table(std::string& out, const Reconciliation& report) {
    out += fmt::format("\nWorst size classes by wasted bytes ({} in partly used slabs over all "
                       "classes)\n",
                       quantity(static_cast<int64_t>(report.slab_waste), true));
    if (!report.per_stack_command.empty()) {
        out += "  which stacks hold them (an estimate): " + report.per_stack_command + "\n";
    }
    if (report.worst_bins.empty()) {
        out += report.stats.merged.bins.empty() ? "  (the statistics were printed without bins)\n"
                                                : "  none: every slab in use is full\n";
        return;
    }
    out += fmt::format("  {:>8} {:>10} {:>8} {:>9} {:>10} {:>6} {:>12}\n", "size", "objects",
                       "slabs", "regs/slab", "slab size", "used", "wasted");
    for (const WastedBin& wasted : report.worst_bins) {
        const BinStats& bin = wasted.bin;
        out += fmt::format("  {:>8} {:>10} {:>8} {:>9} {:>10} {:>5.1f}% {:>12}\n", bin.size,
                           bin.curregs, bin.curslabs, bin.regions, bin.slab_size,
                           wasted.utilization * 100.0,
                           quantity(static_cast<int64_t>(wasted.wasted), true));
    }
}

} // namespace

std::string at_exit_note(const JemallocStats& stats) {
    if (!stats.printed_at_exit) {
        return {};
    }
    return "printed at exit (opt.stats_print:true): after the program's destructors and atexit "
           "handlers had freed what they free, so what it held while it ran is not here (the "
           "profile's and jemalloc's figures are what was left at exit); take the statistics "
           "while it runs: malloc_stats_print(write_cb, arg, \"J\") in-process, the agent's "
           "/debug/jemalloc/stats, or redis-cli MEMORY MALLOC-STATS";
}

std::string report_text(const Reconciliation& report, std::string_view stats_source) {
    std::string out = describe(report.stats, stats_source);
    if (std::string note = at_exit_note(report.stats); !note.empty()) {
        out += wrap("note: " + note, 110, 6) + "\n";
    }
    out += "\nFrom the heap profile to jemalloc's address space\n";
    rows_table(out, report.allocator);
    if (!report.rss.empty()) {
        out += fmt::format("\nThe process's RSS ({})\n",
                           report.resident->per_mapping ? "smaps" : "smaps_rollup");
        rows_table(out, report.rss);
    }
    bins_table(out, report);
    return out;
}

} // namespace heapkit::stats
