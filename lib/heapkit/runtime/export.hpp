// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/sample_type.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

struct ExportOptions {
    bool symbolize = true; // false: addresses, mappings and build ids only
    bool per_thread = false;
    SampleType sample = SampleType::inuse_space;
};

// A heap_v2 dump of this process as gzipped pprof, named from this process's own
// mappings (the dump carries /proc/self/maps) or left for server-side symbolization.
Result<std::string> pprof_from_dump(std::string_view dump, const ExportOptions& options);

// The same dump as collapsed stacks.
Result<std::string> folded_from_dump(std::string_view dump, const ExportOptions& options);

// jeprof's symbol lookup for addresses of this process (already moved back by one for
// return addresses): one "0x<hex>\t<name>" line each, an inline chain joined by "--"
// outermost first, module+0xOFFSET when nothing names the address.
std::string symbol_lines(const std::vector<uint64_t>& addresses);

} // namespace heapkit::runtime
