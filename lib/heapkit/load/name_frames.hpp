// SPDX-License-Identifier: MIT
// Pass 4 of loading, symbolize: shared by load_profile and name_pprof.
#pragma once

#include "heapkit/load/load.hpp"

namespace heapkit {

// Names every location of loaded.profile, and puts in loaded.report what could not be
// named, summed up per file with the next step; `sample` weighs the unnamed share.
void name_frames(Loaded& loaded, const LoadOptions& options, SampleType sample);

} // namespace heapkit
