// SPDX-License-Identifier: MIT
// Small profiles built from dump text, for the model and writer tests.
#pragma once

#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"

#include <doctest/doctest.h>
#include <map>
#include <string>

namespace heapkit::test {

// Three stacks in one PIE executable and a jemalloc library. Stack 1 (hold):
// allocator internals in libjemalloc, malloc, then app functions hold -> main.
// Stack 2 (churn): freed memory, only accum counts. Stack 3: an address outside every
// mapping. Period 1 so that values stay exact.
inline const char* sample_dump =
    "heap_v2/1\n"
    "  t*: 3: 12288 [13: 13568]\n"
    "  t0: 2: 8192 [2: 8192] main\n"
    "  t1: 1: 4096 [11: 5376]\n"
    "@ 0x7f0000001010 0x7f0000002020 0x555500001100 0x555500001200\n"
    "  t*: 2: 8192 [2: 8192]\n"
    "  t0: 2: 8192 [2: 8192]\n"
    "@ 0x7f0000001010 0x555500001300 0x555500001200\n"
    "  t*: 0: 0 [10: 1280]\n"
    "  t1: 0: 0 [10: 1280]\n"
    "@ 0x900000 0x555500001201\n"
    "  t*: 1: 4096 [1: 4096]\n"
    "  t1: 1: 4096 [1: 4096]\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "555500000000-555500001000 r--p 00000000 fe:00 1  /srv/app\n"
    "555500001000-555500002000 r-xp 00001000 fe:00 1  /srv/app\n"
    "7f0000000000-7f0000003000 r-xp 00008000 fe:00 2  /lib/libjemalloc.so.2\n";

inline Profile make_profile(const char* text, bool per_thread = false) {
    auto dump = parse_dump(text, "test.heap");
    REQUIRE(dump);
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(*dump));
    return build_profile(dumps, BuildOptions{per_thread});
}

// Names locations by lookup address, as a symbolizer would.
inline void name_locations(Profile& profile, const std::map<uint64_t, std::string>& names) {
    for (Location& location : profile.locations) {
        if (auto it = names.find(location.address); it != names.end()) {
            std::string_view name = profile.strings->intern(it->second);
            location.frames = {Frame{name, name, {}, 0, 0, 0}};
        }
    }
}

// The names sample_dump's app addresses get: lookup addresses (return addresses - 1).
inline const std::map<uint64_t, std::string> app_names = {
    {0x7f0000002020 - 1, "malloc"}, {0x555500001100 - 1, "hold"}, {0x555500001200 - 1, "main"},
    {0x555500001300 - 1, "churn"},  {0x555500001201 - 1, "main"},
};

} // namespace heapkit::test
