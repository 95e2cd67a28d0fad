// SPDX-License-Identifier: MIT
// Small profiles built from dump text, for the model and writer tests.
#pragma once

#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/read_dump.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

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

// A stack of function names, root first, and the bytes in use there.
struct NamedStack {
    std::vector<std::string> frames;
    int64_t bytes = 0;
};

// A dump of one program (/srv/app) holding `stacks`, each one object of its bytes, with
// period 1 so that values stay exact (for objects of 64 bytes and more: smaller ones are
// unsampled upwards, 1 - e^-size being below 1); every name is given one address and named there.
// `pid` goes into the source name as jemalloc's file names carry it.
inline Profile named_profile(const std::vector<NamedStack>& stacks, int64_t time_nanos = 0,
                             int pid = 1000) {
    std::map<std::string, uint64_t> addresses;
    std::string body;
    int64_t total = 0;
    for (const NamedStack& stack : stacks) {
        body += "@";
        for (auto frame = stack.frames.rbegin(); frame != stack.frames.rend(); ++frame) {
            auto [it, added] =
                addresses.try_emplace(*frame, 0x555500001001 + 0x10 * addresses.size());
            body += fmt::format(" 0x{:x}", it->second);
        }
        body += fmt::format("\n  t*: 1: {0} [1: {0}]\n", stack.bytes);
        total += stack.bytes;
    }
    std::string text = fmt::format("heap_v2/1\n  t*: {0}: {1} [{0}: {1}]\n{2}\n"
                                   "MAPPED_LIBRARIES:\n"
                                   "555500000000-555500001000 r--p 00000000 fe:00 1  /srv/app\n"
                                   "555500001000-555500009000 r-xp 00001000 fe:00 1  /srv/app\n",
                                   stacks.size(), total, body);
    auto dump = parse_dump(text, fmt::format("jeprof.{}.0.f.heap", pid));
    REQUIRE(dump);
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(*dump));
    Profile profile = build_profile(dumps, BuildOptions{});
    profile.time_nanos = time_nanos;
    std::map<uint64_t, std::string> names;
    for (const auto& [name, address] : addresses) {
        names[address] = name;     // the leaf: the allocation's own address
        names[address - 1] = name; // callers: return addresses less one
    }
    name_locations(profile, names);
    return profile;
}

// What `produce` writes to a sink, as one string.
template <class Produce> std::string written(Produce produce) {
    std::string out;
    auto ok = produce([&](std::string_view piece) {
        out += piece;
        return Result<void>{};
    });
    REQUIRE(ok);
    return out;
}

} // namespace heapkit::test
