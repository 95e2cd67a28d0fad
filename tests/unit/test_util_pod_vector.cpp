// SPDX-License-Identifier: MIT
#include "heapkit/util/pod_vector.hpp"

#include <cstdint>
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using heapkit::PodVector;

namespace {

// How many of the pages of `bytes` from `start` (page-aligned) are resident.
size_t resident_pages(const void* start, size_t bytes) {
    auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    REQUIRE(::mincore(const_cast<void*>(start), bytes, in.data()) == 0);
    size_t count = 0;
    for (unsigned char flags : in) {
        count += flags & 1;
    }
    return count;
}

} // namespace

TEST_CASE("heapkit::PodVector::release_front lets go of the whole pages read, no more") {
    auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t per_page = page / sizeof(uint64_t);
    PodVector<uint64_t> values;
    for (uint64_t v = 0; v < 20 * per_page; ++v) {
        values.push_back(v + 1);
    }
    // Half a page past the fifth: the five pages below go, the sixth (still read) stays.
    size_t read = 5 * per_page + per_page / 2;
    values.release_front(read);
    CHECK(values.size() == 20 * per_page);
    CHECK(resident_pages(values.data(), 5 * page) == 0);
    size_t intact = 0;
    for (size_t i = 5 * per_page; i < values.size(); ++i) {
        intact += values[i] == i + 1 ? 1 : 0;
    }
    CHECK(intact == 15 * per_page);
    CHECK(values[0] == 0);                     // a page let go of reads as zeros
    values.release_front(values.size() + 100); // past the end: up to the end
    CHECK(values[values.size() - 1] == 0);
    values.push_back(7); // still a growable array
    CHECK(values.back() == 7);
}
