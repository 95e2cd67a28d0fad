// SPDX-License-Identifier: MIT
// load_profile (load/load.hpp): the pipeline the tools and the runtime share.
#include "heapkit/load/load.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
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
    for (std::string& line :
         describe_unnamed(symbols.modules, symbols.unmapped, options.list_unnamed)) {
        loaded.report.warnings.push_back(std::move(line));
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

} // namespace heapkit
