// SPDX-License-Identifier: MIT
// load_profile (load/load.hpp): the pipeline the tools and the runtime share.
#include "heapkit/load/load.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/symbolize/debian_package.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>

namespace heapkit {
namespace {

Result<RawDump> read_input(const Input& input) {
    if (!input.bytes) {
        return read_dump(input.name);
    }
    if (is_gzip(*input.bytes)) {
        HEAPKIT_TRY_ASSIGN(std::string text, gunzip(*input.bytes, input.name));
        return parse_dump(text, input.name);
    }
    return parse_dump(*input.bytes, input.name);
}

// Pass 1, read: every input parsed; a dump given twice is counted twice, with a warning.
Result<std::vector<RawDump>> read_inputs(std::span<const Input> inputs, LoadReport& report) {
    if (inputs.empty()) {
        return fail("no input dump given");
    }
    if (std::count_if(inputs.begin(), inputs.end(),
                      [](const Input& input) { return !input.bytes && input.name == "-"; }) > 1) {
        return fail("standard input (\"-\") is given more than once; it can be read only once");
    }
    std::vector<RawDump> dumps;
    std::set<std::string> seen;
    for (const Input& input : inputs) {
        if (!input.bytes && !seen.insert(input.name).second) {
            report.warnings.push_back(fmt::format(
                "{} is given more than once; its samples are counted each time", input.name));
        }
        HEAPKIT_TRY_ASSIGN(RawDump dump, read_input(input));
        dumps.push_back(std::move(dump));
    }
    return dumps;
}

// Pass 4, symbolize: names for every location, and what could not be named, summed up
// per file with the next step.
void name_frames(Loaded& loaded, const LoadOptions& options) {
    SymbolizeReport symbols = symbolize(loaded.profile, options.symbols);
    loaded.report.out_of_descriptors = symbols.out_of_descriptors;
    for (std::string& warning : symbols.warnings) {
        loaded.report.warnings.push_back(std::move(warning));
    }
    if (!options.symbols.names) {
        return;
    }
    loaded.report.unnamed_locations = symbols.unnamed_locations;
    loaded.report.modules = std::move(symbols.modules);
    loaded.report.unmapped = std::move(symbols.unmapped);
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

} // namespace

Result<Loaded> load_profile(std::span<const Input> inputs, const LoadOptions& options) {
    return catching([&]() -> Result<Loaded> {
        Loaded loaded;
        HEAPKIT_TRY_ASSIGN(std::vector<RawDump> dumps, read_inputs(inputs, loaded.report));
        // Passes 2 and 3, unsample and model: one profile of all dumps.
        loaded.profile = build_profile(dumps, BuildOptions{options.per_thread});
        dumps.clear(); // the profile holds all it needs of them
        HEAPKIT_TRY(check_sample_type(loaded.profile, options.sample));
        name_frames(loaded, options);
        return loaded;
    });
}

void merge_report(LoadReport& into, LoadReport more) {
    for (std::string& warning : more.warnings) {
        if (std::find(into.warnings.begin(), into.warnings.end(), warning) == into.warnings.end()) {
            into.warnings.push_back(std::move(warning));
        }
    }
    into.unnamed_locations += more.unnamed_locations;
    merge_module_reports(into.modules, std::move(more.modules));
    std::vector<uint64_t> unmapped;
    std::set_union(into.unmapped.begin(), into.unmapped.end(), more.unmapped.begin(),
                   more.unmapped.end(), std::back_inserter(unmapped));
    into.unmapped = std::move(unmapped);
}

std::vector<std::string> unnamed_warnings(LoadReport& report, bool list_addresses,
                                          const std::string& cache_directory) {
    find_packages(report.modules, cache_directory);
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    UnnamedHints hints{urls != nullptr && *urls != '\0'};
    return describe_unnamed(report.modules, report.unmapped, list_addresses, hints);
}

} // namespace heapkit
