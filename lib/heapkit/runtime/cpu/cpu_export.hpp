// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/writers.hpp"
#include "heapkit/load/load.hpp"
#include "heapkit/runtime/cpu/cpu_sampler.hpp"

#include <string>

namespace heapkit::runtime {

// The samples as this process's profile: one sample per distinct stack, its
// inuse_objects the ticks and inuse_space their CPU nanoseconds (PprofOptions'
// cpu_period_nanos convention). Named in-process unless `names` is false.
Profile cpu_profile(const CpuSamples& samples, bool names);

// Gzipped pprof as Go's /debug/pprof/profile writes it: samples/count and
// cpu/nanoseconds, period cpu/nanoseconds, the profile's duration, mappings, build ids.
Result<std::string> cpu_pprof(const CpuSamples& samples, bool names);

// gperftools' binary CPU profile (what jeprof reads from /pprof/profile): 64-bit words
// 0, 3, 0, period in microseconds, 0; per stack its count, depth and pcs; the trailer
// 0, 1, 0; then /proc/self/maps as text. Addresses stay unnamed (jeprof asks
// /pprof/symbol).
std::string cpu_gperftools(const CpuSamples& samples);

// The profile's flame graph (library's SVG writer), widths in ticks.
Result<std::string> cpu_flame_graph(const CpuSamples& samples, unsigned width);

} // namespace heapkit::runtime
