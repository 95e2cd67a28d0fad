// SPDX-License-Identifier: MIT
#include "heapkit/stats/jestat.hpp"

#include "heapkit/read/read_dump.hpp"
#include "heapkit/stats/report_json.hpp"
#include "heapkit/stats/report_svg.hpp"
#include "heapkit/stats/report_text.hpp"
#include "heapkit/stats/stats_json.hpp"
#include "heapkit/stats/stats_print_text.hpp"
#include "heapkit/stats/stats_stream.hpp"
#include "heapkit/unsample/unsample.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/output.hpp"
#include "heapkit/util/try.hpp"

#include <cstdint>
#include <fmt/format.h>

namespace heapkit::stats {

Result<JemallocStats> parse_stats(std::string_view stream, std::string_view source,
                                  std::string* note) {
    LocatedStats located = locate_stats(stream);
    if (note != nullptr) {
        *note = skipped_note(located, source);
    }
    std::string_view text = located.text;
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{') {
        return parse_stats_json(text, source);
    }
    if (is_stats_print_text(text)) {
        return parse_stats_print_text(text, source);
    }
    return fail("{}: not jemalloc statistics: expected malloc_stats_print's JSON (option J) or "
                "its text (\"___ Begin jemalloc statistics ___\")",
                source);
}

Result<ProfileFigures> profile_figures(const std::string& path, uint64_t sampled_extent) {
    HEAPKIT_TRY_ASSIGN(RawDump dump, read_dump(path));
    return profile_figures(dump, sampled_extent);
}

ProfileFigures profile_figures(const RawDump& dump, uint64_t sampled_extent) {
    ProfileFigures out;
    out.sample_period = dump.sample_period;
    for (const RawStack& stack : dump.stacks) {
        int64_t bytes = unsample(stack.total, dump.sample_period).inuse_space;
        out.inuse = bytes > INT64_MAX - out.inuse ? INT64_MAX : out.inuse + bytes; // saturates
        // A stack's objects are told apart by their mean size: one call site rarely
        // allocates both below and above 16 KiB.
        const SampledCounts& counts = stack.total;
        if (counts.cur_objects != 0 && counts.cur_bytes / counts.cur_objects < sampled_extent) {
            out.sampled_small_objects += counts.cur_objects;
            out.sampled_small_bytes += counts.cur_bytes;
        }
    }
    return out;
}

namespace {

// A path as a POSIX shell reads it back: quoted unless every byte is plainly safe.
std::string shell_word(std::string_view path) {
    if (!path.empty() &&
        path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-+=.,/:@%") == std::string_view::npos) {
        return std::string(path);
    }
    std::string out = "'";
    for (char c : path) {
        if (c == '\'') {
            out += "'\\''"; // close, an escaped quote, open again
        } else {
            out += c;
        }
    }
    return out + "'";
}

} // namespace

std::string per_stack_command(const JestatOptions& options, uint64_t slab_waste) {
    if (slab_waste == 0 || options.dump.empty() || options.dump == "-" || options.stats == "-") {
        return {};
    }
    return fmt::format("heapfold --text --stats {} {}", shell_word(options.stats),
                       shell_word(options.dump));
}

Result<Reconciliation> load_reconciliation(const JestatOptions& options,
                                           std::vector<std::string>& notes) {
    HEAPKIT_TRY_ASSIGN(InputText stats_text,
                       read_input(options.stats, default_max_inflated, "jemalloc statistics"));
    std::string note;
    HEAPKIT_TRY_ASSIGN(JemallocStats stats, parse_stats(stats_text.bytes, stats_text.name, &note));
    if (!note.empty()) {
        notes.push_back(std::move(note));
    }
    std::optional<ProfileFigures> profile;
    if (!options.dump.empty()) {
        HEAPKIT_TRY_ASSIGN(profile, profile_figures(options.dump, stats.sampled_extent()));
    }
    std::optional<ResidentMemory> resident;
    if (!options.smaps.empty()) {
        HEAPKIT_TRY_ASSIGN(InputText smaps_text,
                           read_input(options.smaps, default_max_inflated, "an smaps file"));
        HEAPKIT_TRY_ASSIGN(resident, parse_smaps(smaps_text.bytes, smaps_text.name));
    }
    Reconciliation report = reconcile(stats, profile, resident);
    report.per_stack_command = per_stack_command(options, report.slab_waste);
    return report;
}

std::string render(const Reconciliation& report, ReportFormat format, std::string_view source) {
    switch (format) {
    case ReportFormat::json:
        return report_json(report, source);
    case ReportFormat::svg:
        return report_svg(report, source);
    case ReportFormat::text:
        break;
    }
    return report_text(report, source);
}

Result<std::vector<std::string>> run_jestat(const JestatOptions& options) {
    std::vector<std::string> notes;
    HEAPKIT_TRY_ASSIGN(Reconciliation report, load_reconciliation(options, notes));
    std::string source = options.stats == "-" ? "<stdin>" : options.stats;
    HEAPKIT_TRY(write_output(OutputTarget{options.output}, render(report, options.format, source)));
    return notes;
}

} // namespace heapkit::stats
