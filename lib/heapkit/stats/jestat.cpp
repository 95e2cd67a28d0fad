// SPDX-License-Identifier: MIT
#include "heapkit/stats/jestat.hpp"

#include "heapkit/read/read_dump.hpp"
#include "heapkit/stats/report_json.hpp"
#include "heapkit/stats/report_svg.hpp"
#include "heapkit/stats/report_text.hpp"
#include "heapkit/stats/stats_json.hpp"
#include "heapkit/stats/stats_print_text.hpp"
#include "heapkit/unsample/unsample.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/output.hpp"
#include "heapkit/util/try.hpp"

#include <cstdint>

namespace heapkit::stats {

Result<JemallocStats> parse_stats(std::string_view text, std::string_view source) {
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

Result<int64_t> profile_inuse(const std::string& path) {
    HEAPKIT_TRY_ASSIGN(RawDump dump, read_dump(path));
    int64_t total = 0;
    for (const RawStack& stack : dump.stacks) {
        int64_t bytes = unsample(stack.total, dump.sample_period).inuse_space;
        total = bytes > INT64_MAX - total ? INT64_MAX : total + bytes; // saturates, as unsample
    }
    return total;
}

Result<Reconciliation> load_reconciliation(const JestatOptions& options) {
    HEAPKIT_TRY_ASSIGN(InputText stats_text, read_input(options.stats));
    HEAPKIT_TRY_ASSIGN(JemallocStats stats, parse_stats(stats_text.bytes, stats_text.name));
    std::optional<int64_t> inuse;
    if (!options.dump.empty()) {
        HEAPKIT_TRY_ASSIGN(inuse, profile_inuse(options.dump));
    }
    std::optional<ResidentMemory> resident;
    if (!options.smaps.empty()) {
        HEAPKIT_TRY_ASSIGN(InputText smaps_text, read_input(options.smaps));
        HEAPKIT_TRY_ASSIGN(resident, parse_smaps(smaps_text.bytes, smaps_text.name));
    }
    return reconcile(stats, inuse, resident);
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

Result<void> run_jestat(const JestatOptions& options) {
    HEAPKIT_TRY_ASSIGN(Reconciliation report, load_reconciliation(options));
    std::string source = options.stats == "-" ? "<stdin>" : options.stats;
    return write_output(OutputTarget{options.output}, render(report, options.format, source));
}

} // namespace heapkit::stats
