// SPDX-License-Identifier: MIT
// The pipeline that turns dumps into one profile: read -> unsample -> model -> symbolize;
// and a series of dumps, each loaded on its own.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/options.hpp"
#include "heapkit/unsample/heap_values.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// One dump to load: a jemalloc heap_v2 dump, a jeprof symbolized profile or a pprof
// profile (any producer's: heap or CPU; read on its own), plain or gzipped; or jemalloc's
// allocation log (<prefix>.<pid>.<seq>.json), given with one dump of the same process for its
// memory map.
struct Input {
    std::string name; // the file to read ("-": standard input), or a name for messages
    std::optional<std::string_view> bytes; // the dump already in memory (borrowed for the
                                           // call): `name` is then not opened
    int64_t modified_nanos = 0;            // with `bytes`: its file's modification time, when known
};

struct LoadOptions {
    SampleType sample = SampleType::inuse_space; // checked: alloc_* need prof_accum:true
    // `sample` was chosen, not left at its default: an allocation log, which has nothing
    // in use, refuses inuse_* only when chosen (its views default to alloc_space).
    bool sample_given = false;
    // The name it was chosen by (--sample), when one was: a pprof's own sample types
    // (samples, cpu, ...) are known only once it is read. Empty: `sample` as it is.
    std::string sample_name;
    bool per_thread = false; // one sample per (stack, thread)
    SymbolizeOptions symbols;
    bool list_unnamed = false; // the report lists every address left without a name
    // An allocation log's samples are its freeing stacks (and threads), not allocating ones.
    bool log_free_sites = false;
    // The most a gzipped input may inflate to, in bytes; 0: the default, 2 GiB (a gzip
    // bomb of a few megabytes stops there, with a message naming the file).
    uint64_t max_inflated = 0;
    // jemalloc's statistics (malloc_stats_print's JSON or text) of the moment the one heap
    // dump was written: the profile becomes its fragmentation profile, an estimate
    // (stats/fragmentation.hpp): fragmentation_space, fragmentation_objects, inuse_*.
    // Empty: none.
    std::string stats;
};

// options.max_inflated, or the default bound when it is 0: what every input of a load may
// inflate to (the dumps, a pprof named in place, --stats's statistics).
uint64_t inflation_limit(const LoadOptions& options);

// The sample type a view of `profile` shows: the one chosen (by name: an error naming
// the file and its types when it has none of that name); when none was, a pprof's
// default, alloc_space for an allocation log (nothing is in use), else options.sample.
Result<SampleType> chosen_sample(const Profile& profile, const LoadOptions& options);

// What loading could not do, for the user: nothing here stops the profile from being used.
struct LoadReport {
    std::vector<std::string> warnings; // one line each, without a "warning:" prefix
    size_t unnamed_locations = 0;      // locations left without a name (allocator aside)
    // Why a file could not be opened for want of descriptors (EMFILE, ENFILE), when one
    // could not: names are then missing for the process's reason, not the file's.
    std::optional<std::string> out_of_descriptors;
    // Per file the dumps map, what stayed unnamed and why (unnamed_warnings() says it),
    // and the runtime addresses in no mapping.
    std::vector<ModuleReport> modules;
    std::vector<uint64_t> unmapped;
    // How much of the profile those unnamed addresses hold (describe_unnamed's summary).
    UnnamedShare share;
};

// `more` (what loading other dumps said: the --base dumps, a series' next dump) added to
// `into`: each warning once, each file's addresses together; unnamed_locations summed.
void merge_report(LoadReport& into, LoadReport more);

// What stayed unnamed (no "warning:" prefix; symbolize/module_report.hpp's
// describe_unnamed): one line for the files without debug information together, with the
// share of the profile under their unnamed addresses and where their debug files are to
// be had (their Debian packages' -dbgsym, from dpkg's file lists; DEBUGINFOD_URLS), and a
// line for each file that could not be used. `list_addresses` (--verbose): every file's
// own line, and each unnamed address on a line of its own. Meant once per command, after
// all its dumps are loaded. `cache_directory` (may be empty): where dpkg's answers are
// kept between commands.
std::vector<std::string> unnamed_warnings(LoadReport& report, bool list_addresses,
                                          const std::string& cache_directory = {});

// One short line per stripped module of `modules` (symbolize/module_report.hpp's
// stripped_notes): its Debian package, found as unnamed_warnings finds it, and
// DEBUGINFOD_URLS. For outputs that say it briefly (the runtime's).
std::vector<std::string> stripped_module_notes(std::vector<ModuleReport>& modules,
                                               const std::string& cache_directory = {});

struct Loaded {
    Profile profile;
    LoadReport report;
};

// read -> unsample -> model -> symbolize: the dumps merged into one profile, each dump's
// addresses placed in its own mappings, frames named from DWARF or symbol tables.
Result<Loaded> load_profile(std::span<const Input> inputs, const LoadOptions& options);

// A series: dumps of one program over time (prof_interval's jeprof.<pid>.<seq>.i<n>.heap,
// prof.dump's, dumps of several runs), each loaded on its own, oldest first.
struct LoadedSeries {
    std::vector<Profile> dumps;
    LoadReport report; // what loading said of all of them, each line once; the unnamed
                       // locations of the dump that left the most
};

// load_profile for each input apart, then in the order they were written: by the files'
// modification times, ties broken by jemalloc's sequence number in the file name (the
// order given when some time is unknown: standard input, memory). An error for fewer than
// 3 dumps, a file given twice, or dumps of different programs (the main executables'
// build ids differ).
Result<LoadedSeries> load_series(std::span<const Input> inputs, const LoadOptions& options);

} // namespace heapkit
