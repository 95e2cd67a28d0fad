// SPDX-License-Identifier: MIT
// How much of a profile lies under the addresses symbolization left unnamed: what tells
// a reader whether a missing debug file matters to this profile.
#pragma once

#include "heapkit/load/load.hpp"

namespace heapkit {

// Sets each of `report.modules`' unnamed_value and `report.share` from `profile`'s
// stacks, in `sample`'s unit: a stack counts for every file with an unnamed address in
// it, and once for the files without debug information together.
void measure_unnamed(const Profile& profile, SampleType sample, LoadReport& report);

} // namespace heapkit
