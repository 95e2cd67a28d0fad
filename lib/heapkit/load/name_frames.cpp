// SPDX-License-Identifier: MIT
#include "heapkit/load/name_frames.hpp"

#include "heapkit/load/unnamed_share.hpp"
#include "heapkit/symbolize/symbolize.hpp"

namespace heapkit {

void name_frames(Loaded& loaded, const LoadOptions& options, SampleType sample) {
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
    measure_unnamed(loaded.profile, sample, loaded.report);
}

} // namespace heapkit
