// SPDX-License-Identifier: MIT
// What unsampling yields: the four pprof heap values of a stack, and the names that pick
// one of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace heapkit {

// The four pprof heap values, in pprof's conventional order.
struct HeapValues {
    int64_t alloc_objects = 0;
    int64_t alloc_space = 0; // bytes
    int64_t inuse_objects = 0;
    int64_t inuse_space = 0; // bytes
};

// The four heap measures, named as pprof names them.
enum class SampleType { alloc_objects, alloc_space, inuse_objects, inuse_space };

std::string_view name_of(SampleType type);
std::string_view unit_of(SampleType type); // "count" or "bytes"
std::optional<SampleType> parse_sample_type(std::string_view name);
int64_t value_of(const HeapValues& values, SampleType type);

// True for alloc_objects and alloc_space: they need jemalloc's accumulated counts.
bool needs_accum(SampleType type);

} // namespace heapkit
