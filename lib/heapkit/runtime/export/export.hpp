// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/writers.hpp"
#include "heapkit/load/load.hpp"
#include "heapkit/model/log_profile.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

// A heap_v2 dump of this process as gzipped pprof, named from this process's own
// mappings (the dump carries /proc/self/maps) or left for server-side symbolization
// (options.symbols.names false). What stays unnamed shows as module+offset.
Result<std::string> pprof_from_dump(std::string_view dump, const LoadOptions& options);

// A heap_v2 dump of this process as a profile, named as pprof_from_dump names it.
Result<Profile> own_dump_profile(std::string_view dump, const LoadOptions& options);

// Stacks this process recorded itself (not a jemalloc dump, e.g. CPU samples) as a
// profile: placed in /proc/self/maps as it is now, named with the symbols kept across
// requests, or given build ids only when `names` is false.
Profile own_profile(RawDump dump, bool names);

// An allocation log this process wrote, placed in /proc/self/maps as it is now and named
// as own_profile names; an error when the process ran out of descriptors on the way.
Result<Profile> own_log_profile(const ProfLog& log, const LogBuildOptions& options, bool names);

// The same dump as collapsed stacks.
Result<std::string> folded_from_dump(std::string_view dump, const LoadOptions& options);

// jeprof's symbol lookup for addresses of this process (already moved back by one for
// return addresses): one "0x<hex>\t<name>" line each, an inline chain joined by "--"
// outermost first, module+0xOFFSET when nothing names the address. An error when the
// process ran out of file descriptors on the way.
Result<std::string> symbol_lines(const std::vector<uint64_t>& addresses);

// Prometheus text on the files and answers kept between requests (see export.cpp).
std::string symbolizer_metrics();

} // namespace heapkit::runtime
