// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
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

struct RawStack {
    std::vector<uint64_t> frames; // runtime addresses as written: leaf first, return addresses
    SampledCounts total;          // the `t*` line
    std::vector<ThreadCounts> threads;
    size_t line = 0; // line of the `@` in the dump
};

// The names jeprof gave addresses in a symbolized profile (`--- symbol` section).
// Keys are lookup addresses (return addresses already moved back by one); each value
// is the inline chain, outermost function first.
using JeprofSymbols = std::unordered_map<uint64_t, std::vector<std::string>>;

// Everything one heap_v2 dump says, before unsampling or symbolization.
struct RawDump {
    std::string source;         // the input's name, for messages and comments
    uint64_t sample_period = 0; // R = 2^lg_prof_sample from the header
    SampledCounts total;        // the header's `t*` line
    std::vector<ThreadCounts> threads;
    std::unordered_map<uint64_t, std::string> thread_names; // uid -> name, when given
    std::vector<RawStack> stacks;
    std::vector<MapEntry> maps;
    bool has_maps = false; // a MAPPED_LIBRARIES section was present

    // Only for jeprof symbolized profiles.
    JeprofSymbols jeprof_symbols;
    std::string jeprof_binary; // the `binary=` line, when present

    // True when any accum column is non-zero (prof_accum:true was in force).
    bool has_accum() const;
};

} // namespace heapkit
