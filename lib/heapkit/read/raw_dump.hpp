// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/pod_vector.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace heapkit {

// One `tX: curobjs: curbytes [accumobjs: accumbytes]` line, as sampled (not unsampled).
struct SampledCounts {
    uint64_t cur_objects = 0;
    uint64_t cur_bytes = 0;
    uint64_t accum_objects = 0;
    uint64_t accum_bytes = 0;

    // True when an accum column is non-zero (prof_accum:true was in force).
    bool has_accum() const { return accum_objects != 0 || accum_bytes != 0; }
};

// A `tN` line: jemalloc's thread uid N (not an OS tid) and its counts.
struct ThreadCounts {
    uint64_t thread_uid = 0;
    SampledCounts counts;
};

// One line of /proc/<pid>/maps as copied under MAPPED_LIBRARIES.
struct MapEntry {
    uint64_t start = 0; // runtime address
    uint64_t end = 0;   // runtime address, exclusive
    uint64_t file_offset = 0;
    bool executable = false;
    bool deleted = false; // the path carried a " (deleted)" suffix, removed from `path`
    std::string path;     // may be empty (anonymous) or a pseudo path such as "[vdso]"
    size_t line = 0;      // line number in the dump, for messages
};

// One `@` line and its count lines. A stack's frames and per-thread counts live in
// RawDump's flat arrays, one allocation for all stacks instead of two per stack; ask
// RawDump::frames_of and threads_of for them. 48 bytes: a dump holds millions.
struct RawStack {
    SampledCounts total;      // the `t*` line
    uint32_t first_frame = 0; // index into RawDump::frames
    uint32_t frame_count = 0;
    uint32_t first_thread = 0; // index into RawDump::stack_threads
    uint32_t thread_count = 0;
};

// The names jeprof gave addresses in a symbolized profile (`--- symbol` section).
// Keys are lookup addresses (return addresses already moved back by one); each value
// is the inline chain, outermost function first.
using JeprofSymbols = std::unordered_map<uint64_t, std::vector<std::string>>;

// Everything one heap_v2 dump says, before unsampling or symbolization.
struct RawDump {
    std::string source;         // the input's name, for messages and comments
    int64_t modified_nanos = 0; // the file's modification time (ns since the Unix epoch):
                                // about when the dump was written; 0 when unknown
    uint64_t sample_period = 0; // R = 2^lg_prof_sample from the header
    SampledCounts total;        // the header's `t*` line
    std::vector<ThreadCounts> threads;
    std::unordered_map<uint64_t, std::string> thread_names; // uid -> name, when given
    PodVector<RawStack> stacks;
    // Frame addresses (runtime, as written) by id. The parser gives each distinct address
    // one id: dumps repeat a few thousand addresses millions of times.
    PodVector<uint64_t> addresses;
    PodVector<uint32_t> frames;            // ids into `addresses`, stack after stack: each
                                           // leaf first, then return addresses
    PodVector<ThreadCounts> stack_threads; // the stacks' `tN` lines, stack after stack
    std::vector<MapEntry> maps;
    bool has_maps = false; // a MAPPED_LIBRARIES section was present

    // Only for jeprof symbolized profiles.
    JeprofSymbols jeprof_symbols;
    std::string jeprof_binary; // the `binary=` line, when present

    // A stack's frames as ids into `addresses`.
    std::span<const uint32_t> frames_of(const RawStack& stack) const {
        return {frames.data() + stack.first_frame, stack.frame_count};
    }
    std::span<const ThreadCounts> threads_of(const RawStack& stack) const {
        return {stack_threads.data() + stack.first_thread, stack.thread_count};
    }

    // Appends a stack made in memory rather than parsed. Its addresses get new ids
    // whether or not they are already known. Up to 2^32 - 1 frames and thread lines in all.
    void add_stack(std::span<const uint64_t> frame_addresses, const SampledCounts& counts,
                   std::span<const ThreadCounts> per_thread = {});

    // True when any accum column is non-zero (prof_accum:true was in force).
    bool has_accum() const;

    // The program's executable: the first file the kernel mapped (the first named line of
    // /proc/<pid>/maps). Empty without maps.
    std::string main_path() const;
};

} // namespace heapkit
