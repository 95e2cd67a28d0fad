// SPDX-License-Identifier: MIT
// load_profile (load/load.hpp): the pipeline the tools and the runtime share.
#include "heapkit/load/fragmentation_stats.hpp"
#include "heapkit/load/load.hpp"
#include "heapkit/load/load_log.hpp"
#include "heapkit/load/merge_rules.hpp"
#include "heapkit/load/name_frames.hpp"
#include "heapkit/load/unnamed_share.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/model/pprof_profile.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/symbolize/debug_files/debian_package.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>

namespace heapkit {
namespace {

// What pass 1 read: dumps, allocation logs and pprof profiles (told apart by their first
// bytes). The dumps' stacks went into `stream` as they were read (passes 2 and 3 with
// them): `dumps` keep the rest. A pprof is a profile at once (its values are unsampled).
struct ReadInputs {
    explicit ReadInputs(const BuildOptions& options)
        : stream(options) {}

    std::vector<RawDump> dumps;
    std::vector<ProfLog> logs;
    std::vector<Profile> pprofs;
    ProfileStream stream;
};

Result<void> parse_text(std::string_view text, const std::string& name, ReadInputs& into,
                        const ParsedUpTo& parsed_up_to = {}) {
    if (looks_like_pprof(text)) {
        HEAPKIT_TRY_ASSIGN(PprofFile file, read_pprof(text, name));
        HEAPKIT_TRY_ASSIGN(Profile profile, profile_of_pprof(file, name));
        into.pprofs.push_back(std::move(profile));
        return {};
    }
    if (looks_like_prof_log(text)) {
        HEAPKIT_TRY_ASSIGN(ProfLog log, parse_prof_log(text, name));
        into.logs.push_back(std::move(log));
        return {};
    }
    HEAPKIT_TRY_ASSIGN(RawDump dump, parse_dump(text, name, parsed_up_to, &into.stream));
    into.dumps.push_back(std::move(dump));
    return {};
}

Result<void> read_input(const Input& input, uint64_t max_inflated, ReadInputs& into) {
    if (!input.bytes) {
        // read_dump's way: mapped, pages released as the parser goes by.
        HEAPKIT_TRY_ASSIGN(InputBuffer buffer,
                           InputBuffer::open(input.name, max_inflated, looks_like_pprof));
        size_t dumps = into.dumps.size();
        HEAPKIT_TRY(parse_text(buffer.text(), buffer.name(), into,
                               [&](const char* position) { buffer.release_before(position); }));
        if (into.dumps.size() > dumps) {
            into.dumps.back().modified_nanos = buffer.modified_nanos();
        }
        return {};
    }
    size_t dumps = into.dumps.size();
    if (is_gzip(*input.bytes)) {
        HEAPKIT_TRY_ASSIGN(std::string text, gunzip(*input.bytes, input.name,
                                                    {max_inflated, true, looks_like_pprof}));
        HEAPKIT_TRY(parse_text(text, input.name, into));
    } else {
        HEAPKIT_TRY(parse_text(*input.bytes, input.name, into));
    }
    if (into.dumps.size() > dumps) {
        into.dumps.back().modified_nanos = input.modified_nanos;
    }
    return {};
}

// Pass 1, read: every input parsed; a dump given twice is counted twice, with a warning.
Result<ReadInputs> read_inputs(std::span<const Input> inputs, uint64_t max_inflated,
                               const BuildOptions& build, LoadReport& report) {
    if (inputs.empty()) {
        return fail("no input dump given");
    }
    if (std::count_if(inputs.begin(), inputs.end(),
                      [](const Input& input) { return !input.bytes && input.name == "-"; }) > 1) {
        return fail("standard input (\"-\") is given more than once; it can be read only once");
    }
    ReadInputs read(build);
    std::set<std::string> seen;
    for (const Input& input : inputs) {
        if (!input.bytes && !seen.insert(input.name).second) {
            report.warnings.push_back(fmt::format(
                "{} is given more than once; its samples are counted each time", input.name));
        }
        HEAPKIT_TRY(read_input(input, max_inflated, read));
    }
    return read;
}

// A pprof on its own: merging one with others (dumps, logs, pprofs) is not done yet.
Result<Profile> one_pprof(ReadInputs read) {
    std::string_view pprof = read.pprofs.front().sources.front();
    if (read.pprofs.size() > 1) {
        return fail("{} and {} are both pprof profiles: give one at a time (or one with "
                    "--base)",
                    pprof, read.pprofs[1].sources.front());
    }
    if (!read.dumps.empty() || !read.logs.empty()) {
        return fail("{} is a pprof profile and {} is not: a pprof is read on its own (a dump "
                    "may be its --base)",
                    pprof,
                    read.dumps.empty() ? read.logs.front().source : read.dumps.front().source);
    }
    return std::move(read.pprofs.front());
}

// Passes 2 and 3, unsample and model: one profile of all dumps, or of the one log.
Result<Profile> model(ReadInputs read, const LoadOptions& options, LoadReport& report) {
    if (!read.pprofs.empty()) {
        return one_pprof(std::move(read));
    }
    if (read.logs.empty()) {
        HEAPKIT_TRY(check_mergeable(read.dumps));
        return read.stream.finish(read.dumps);
    }
    if (read.logs.size() > 1) {
        return fail("{} and {} are both allocation logs: give one log (with a dump of its "
                    "process) at a time",
                    read.logs[0].source, read.logs[1].source);
    }
    return load_log_profile(std::move(read.logs.front()), std::move(read.dumps), options, report);
}

// Asks dpkg for the files whose debug file is wanted: only those with unnamed addresses
// and no DWARF, all in one call.
void find_packages(std::vector<ModuleReport>& modules, const std::string& cache_directory) {
    std::vector<std::string> wanted;
    for (const ModuleReport& module : modules) {
        if (!module.unnamed.empty() && module.problem == FileProblem::none &&
            !module.has_debug_info && module.package.empty()) {
            wanted.push_back(module.path);
        }
    }
    std::map<std::string, std::string> packages = debian_packages_of(wanted, cache_directory);
    for (ModuleReport& module : modules) {
        if (auto it = packages.find(module.path); it != packages.end()) {
            module.package = it->second;
        }
    }
}

UnnamedHints hints_from_environment() {
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    return UnnamedHints{urls != nullptr && *urls != '\0', {}, false};
}

// The hints, and where a -dbgsym package is to be named, how apt gets to them.
UnnamedHints hints_for(const std::vector<ModuleReport>& modules) {
    UnnamedHints hints = hints_from_environment();
    if (std::any_of(modules.begin(), modules.end(), [](const ModuleReport& module) {
            return lacks_debug_info(module) && !module.package.empty();
        })) {
        DebugArchive archive = debian_debug_archive();
        hints.debian_codename = std::move(archive.codename);
        hints.debug_archive_listed = archive.listed;
    }
    return hints;
}

} // namespace

Result<Loaded> load_profile(std::span<const Input> inputs, const LoadOptions& options) {
    return catching([&]() -> Result<Loaded> {
        Loaded loaded;
        HEAPKIT_TRY_ASSIGN(ReadInputs read,
                           read_inputs(inputs, inflation_limit(options),
                                       BuildOptions{options.per_thread}, loaded.report));
        // The profile holds all it needs of what was read, which goes at once.
        HEAPKIT_TRY_ASSIGN(loaded.profile, model(std::move(read), options, loaded.report));
        HEAPKIT_TRY(check_totals(loaded.profile));
        // --stats: before the type is chosen by name, and before names (fragmentation_stats.hpp).
        HEAPKIT_TRY(charge_fragmentation(loaded.profile, stats_of(inputs, options),
                                         inflation_limit(options)));
        HEAPKIT_TRY_ASSIGN(SampleType sample, chosen_sample(loaded.profile, options));
        HEAPKIT_TRY(check_sample_type(loaded.profile, sample));
        name_frames(loaded, options, sample);
        return loaded;
    });
}

uint64_t inflation_limit(const LoadOptions& options) {
    return options.max_inflated == 0 ? default_max_inflated : options.max_inflated;
}

Result<SampleType> chosen_sample(const Profile& profile, const LoadOptions& options) {
    if (options.sample_given && options.sample_name.starts_with("fragmentation_") &&
        profile.named_types.empty()) {
        return tl::unexpected(fragmentation_needs_stats(options.sample_name));
    }
    if (options.sample_given && !options.sample_name.empty()) {
        return sample_type_of(profile, options.sample_name);
    }
    if (options.sample_given) {
        return options.sample;
    }
    if (profile.default_type) {
        return *profile.default_type;
    }
    return profile.from_log ? SampleType::alloc_space : options.sample;
}

void merge_report(LoadReport& into, LoadReport more) {
    for (std::string& warning : more.warnings) {
        if (std::find(into.warnings.begin(), into.warnings.end(), warning) == into.warnings.end()) {
            into.warnings.push_back(std::move(warning));
        }
    }
    into.unnamed_locations += more.unnamed_locations;
    if (into.share.total == 0) {
        into.share.what = more.share.what;
    }
    into.share.total += more.share.total;
    into.share.without_debug += more.share.without_debug;
    merge_module_reports(into.modules, std::move(more.modules));
    std::vector<uint64_t> unmapped;
    std::set_union(into.unmapped.begin(), into.unmapped.end(), more.unmapped.begin(),
                   more.unmapped.end(), std::back_inserter(unmapped));
    into.unmapped = std::move(unmapped);
}

std::vector<std::string> unnamed_warnings(LoadReport& report, bool list_addresses,
                                          const std::string& cache_directory) {
    find_packages(report.modules, cache_directory);
    return describe_unnamed(report.modules, report.unmapped, list_addresses,
                            hints_for(report.modules), report.share);
}

std::vector<std::string> stripped_module_notes(std::vector<ModuleReport>& modules,
                                               const std::string& cache_directory) {
    find_packages(modules, cache_directory);
    return stripped_notes(modules, hints_from_environment());
}

} // namespace heapkit
