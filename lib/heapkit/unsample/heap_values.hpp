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

// The four heap measures, named as pprof names them, and the measures only an allocation
// log has (read/prof_log.hpp): of the allocations freed while it ran, those freed within
// 1 ms of their allocation ("temporary"), usable size times lifetime (what a site costs
// in memory over time), and those freed by another thread than the one that allocated
// them (which defeats jemalloc's thread caches).
enum class SampleType {
    alloc_objects,
    alloc_space,
    inuse_objects,
    inuse_space,
    temporary_objects,
    temporary_space,
    byte_seconds,
    cross_thread_objects,
    cross_thread_space,
};

// Every type, in the order pprof profiles of an allocation log list them after alloc_*.
inline constexpr SampleType log_sample_types[] = {
    SampleType::temporary_objects, SampleType::temporary_space, SampleType::byte_seconds,
    SampleType::cross_thread_objects, SampleType::cross_thread_space};

// An allocation log's measures of one sample beyond alloc_* (inuse_* are 0 for a log:
// it holds only objects freed while it ran). Unsampled, like HeapValues.
struct LogValues {
    int64_t temporary_objects = 0; // freed within temporary_nanos of their allocation
    int64_t temporary_space = 0;   // bytes
    int64_t byte_seconds = 0;      // usable size x lifetime, bytes x seconds
    int64_t cross_thread_objects = 0;
    int64_t cross_thread_space = 0; // bytes
};

// What "temporary" means: freed within 1 ms of the allocation.
inline constexpr uint64_t temporary_nanos = 1'000'000;

std::string_view name_of(SampleType type);
std::string_view unit_of(SampleType type); // "count", "bytes" or "byte_seconds"
std::optional<SampleType> parse_sample_type(std::string_view name);
int64_t value_of(const HeapValues& values, SampleType type); // 0 for a log's types
int64_t value_of(const LogValues& values, SampleType type);  // 0 for the heap's types

// True for the types only an allocation log has (they follow the heap's four): inline, as
// the views ask it per sample.
constexpr bool is_log_type(SampleType type) {
    return type >= SampleType::temporary_objects;
}

// True for alloc_objects and alloc_space: they need jemalloc's accumulated counts.
bool needs_accum(SampleType type);

} // namespace heapkit
