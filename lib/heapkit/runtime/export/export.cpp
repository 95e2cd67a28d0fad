// SPDX-License-Identifier: MIT
#include "heapkit/runtime/export/export.hpp"

#include "heapkit/model/address_text.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/maps.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/runtime/export/indexer.hpp"
#include "heapkit/runtime/export/stripped_modules.hpp"
#include "heapkit/symbolize/kept_symbols.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/terminal_text.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/try.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <optional>

namespace heapkit::runtime {
namespace {

// This process's files and their answers, kept across requests: a service maps the same
// libraries for its whole life, so each is read once (its build id, segments, whether it
// is jemalloc) rather than once per request, and a frame found once is not looked up
// again. With address indexes the files are closed after each request (close_kept_files). Never
// destroyed: a page may still be converting while the process exits (the statics made after the
// server started go first, before its stop has waited the page out).
const std::shared_ptr<KeptSymbols>& kept_symbols() {
    static const auto* kept =
        new std::shared_ptr<KeptSymbols>(make_kept_symbols(SymbolizeOptions{}));
    return *kept;
}

// After a conversion named from address indexes, the kept files are closed
// (KeptSymbols::close_files): between requests the process holds no descriptor and no
// page of them. Without an indexer their DWARF, read here, stays open for the next.
void close_kept_files(const SymbolizeOptions& options) {
    if (!options.index_builder) {
        return;
    }
    KeptSymbols& kept = *kept_symbols();
    auto lock = kept.lock();
    kept.close_files();
}

// How this process names its own frames: with the files kept across requests, and from
// address indexes heapkit-index makes (indexer.hpp) where it can be run.
SymbolizeOptions own_symbolize_options(SymbolizeOptions options) {
    options.kept = kept_symbols();
    options.index_builder = own_index_builder();
    if (options.index_builder) {
        options.cache_directory = indexer_cache_directory();
    }
    return options;
}

// This process's mappings, as a dump would carry them.
std::vector<MapEntry> own_maps() {
    std::vector<MapEntry> maps;
    auto text = read_input("/proc/self/maps");
    if (!text) {
        return maps;
    }
    LineCursor lines(text->bytes);
    while (auto line = lines.next()) {
        if (auto entry = parse_maps_line(*line, "/proc/self/maps")) {
            maps.push_back(std::move(*entry));
        }
    }
    return maps;
}

// Names (or not) for a profile of this process's addresses, with the kept files; its
// stripped modules noted (stripped_modules.hpp).
SymbolizeReport name_own(Profile& profile, bool names) {
    SymbolizeOptions options = own_symbolize_options({});
    options.names = names;
    SymbolizeReport report = symbolize(profile, options);
    close_kept_files(options);
    note_stripped_modules(profile, report.modules);
    return report;
}

// `dump`, of this process, placed in its mappings now and named (or not) with the kept
// files; what symbolization could not do goes to `report`.
Profile named_own_profile(RawDump dump, bool names, SymbolizeReport& report) {
    dump.has_maps = true;
    dump.maps = own_maps();
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(dump));
    Profile profile = build_profile(dumps, {});
    report = name_own(profile, names);
    return profile;
}

} // namespace

Result<std::string> pprof_from_dump(std::string_view dump, const LoadOptions& options) {
    HEAPKIT_TRY_ASSIGN(Profile profile, own_dump_profile(dump, options));
    PprofOptions pprof;
    pprof.default_type = options.sample;
    return write_pprof(profile, pprof);
}

Result<Profile> own_dump_profile(std::string_view dump, const LoadOptions& options) {
    Input input{"prof.dump", dump};
    LoadOptions kept = options;
    kept.symbols = own_symbolize_options(kept.symbols);
    auto loaded_or = load_profile({&input, 1}, kept);
    close_kept_files(kept.symbols);
    HEAPKIT_TRY_ASSIGN(Loaded loaded, std::move(loaded_or));
    // Failed rather than served half-named: a client cannot tell a missing name from a
    // stripped file, and trying again later would give the full answer.
    if (const auto& problem = loaded.report.out_of_descriptors) {
        return fail("symbolization ran out of file descriptors: {}", *problem);
    }
    note_stripped_modules(loaded.profile, loaded.report.modules);
    return std::move(loaded.profile);
}

Profile own_profile(RawDump dump, bool names) {
    SymbolizeReport report;
    return named_own_profile(std::move(dump), names, report);
}

Result<Profile> own_log_profile(const ProfLog& log, const LogBuildOptions& options, bool names) {
    Profile profile = build_log_profile(log, own_maps(), options);
    if (const auto& problem = name_own(profile, names).out_of_descriptors) {
        return fail("symbolization ran out of file descriptors: {}", *problem);
    }
    return profile;
}

Result<std::string> folded_from_dump(std::string_view dump, const LoadOptions& options) {
    HEAPKIT_TRY_ASSIGN(Profile profile, own_dump_profile(dump, options));
    FoldedOptions folded;
    folded.sample = options.sample;
    folded.thread_frames = options.per_thread;
    return write_folded(profile, folded);
}

Result<std::string> symbol_lines(const std::vector<uint64_t>& addresses) {
    // One single-frame stack per address: a leaf frame is looked up as it is.
    RawDump dump;
    dump.source = "/proc/self/maps";
    dump.sample_period = 1;
    for (uint64_t address : addresses) {
        dump.add_stack({&address, 1}, {1, 1, 0, 0});
    }
    SymbolizeReport report;
    Profile profile = named_own_profile(std::move(dump), true, report);
    if (const auto& problem = report.out_of_descriptors) {
        return fail("symbolization ran out of file descriptors: {}", *problem);
    }
    std::string out;
    for (const Sample& sample : profile.samples) {
        const Location& location = profile.locations[profile.locations_of(sample).front()];
        std::string names;
        for (auto frame = location.frames.rbegin(); frame != location.frames.rend(); ++frame) {
            names += names.empty() ? "" : "--";
            names += frame->name;
        }
        if (names.empty()) {
            names = location_address_text(profile, location);
        }
        // jeprof matches answers with leading zeros stripped: no padding. It prints the
        // names as they are: the control characters a hostile module's names may hold
        // are escaped here, as --text does.
        fmt::format_to(std::back_inserter(out), "0x{:x}\t{}\n", location.address,
                       terminal_safe(names));
    }
    return out;
}

std::string symbolizer_metrics() {
    KeptSymbolsStats stats = kept_symbols_stats(*kept_symbols());
    std::string out;
    // HELP and TYPE once per name: the second series of a labelled metric has no `help`.
    auto metric = [&](std::string_view name, std::string_view type, std::string_view help,
                      std::string_view labels, size_t value) {
        if (!help.empty()) {
            fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help,
                           name, type);
        }
        fmt::format_to(std::back_inserter(out), "{}{} {}\n", name, labels, value);
    };
    metric("heapkit_symbolizer_files", "gauge",
           "Files known for naming frames (with address indexes, open only while a profile "
           "is named).",
           "", stats.files);
    metric("heapkit_symbolizer_files_opened_total", "counter",
           "Files opened for naming frames (again only when changed on disk).", "", stats.opened);
    metric("heapkit_symbolizer_kept_addresses", "gauge",
           "Addresses whose frames are kept in memory between requests.", "", stats.frames);
    metric("heapkit_symbolizer_lookups_total", "counter",
           "Frame lookups, answered from an address index (index), from what was kept in "
           "memory (hit) or from the files (miss).",
           "{result=\"index\"}", stats.indexed);
    metric("heapkit_symbolizer_lookups_total", "counter", "", "{result=\"hit\"}", stats.hits);
    metric("heapkit_symbolizer_lookups_total", "counter", "", "{result=\"miss\"}", stats.misses);
    metric("heapkit_symbolizer_dropped_total", "counter",
           "Times the kept files and frames reached their bound and were dropped.", "",
           stats.dropped);
    return out + indexer_metrics();
}

} // namespace heapkit::runtime
