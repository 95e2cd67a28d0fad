// SPDX-License-Identifier: MIT
#include "heapkit/runtime/guest/own_pages.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fstream>
#include <string>

namespace {

// Resident kB of this process's read-only mappings of the file whose name starts with
// `name` (from /proc/self/smaps).
long resident_kb(const std::string& name) {
    std::ifstream smaps("/proc/self/smaps");
    long total = 0;
    bool counting = false;
    for (std::string line; std::getline(smaps, line);) {
        if (line.find('-') < line.find(' ') && line.find(' ') != std::string::npos &&
            line.find(':') > line.find(' ')) { // a mapping's own line
            size_t slash = line.rfind('/');
            counting = slash != std::string::npos &&
                       line.compare(slash + 1, name.size(), name) == 0 &&
                       line.find(" r-xp ") != std::string::npos;
        } else if (counting && line.starts_with("Rss:")) {
            total += std::stol(line.substr(4));
        }
    }
    return total;
}

} // namespace

TEST_CASE("release_own_code_pages leaves the pages of a library the host needs too") {
    // This test is a host that uses fmt itself (DT_NEEDED libfmt): fmt's code stays.
    std::string text = fmt::format("{:>12}|{:.3f}", "touched", 2.5);
    REQUIRE(text.size() > 12);
    long before = resident_kb("libfmt.so");
    REQUIRE(before > 0);
    CHECK(heapkit::runtime::release_own_code_pages() > 0); // heapkit's own are let go of
    CHECK(resident_kb("libfmt.so") == before);
}
