// SPDX-License-Identifier: MIT
#include "heapkit/unsample/unsample.hpp"

#include <doctest/doctest.h>
#include <limits>

using namespace heapkit;

// Expected values computed by hand: scale = 1 / (1 - exp(-(s/n)/R)).
TEST_CASE("heapkit::unsample matches hand-computed values, rounded to nearest") {
    // R = 2^19, one 4096-byte object: scale 128.50065..., bytes 526338.666...
    Unsampled one = unsample(1, 4096, 524288);
    CHECK(one.objects == 129); // 128.50065 rounds up
    CHECK(one.bytes == 526339);
    // 97 objects, 406004 bytes: 12198.7546... and 51059208.1078...
    Unsampled many = unsample(97, 406004, 524288);
    CHECK(many.objects == 12199);
    CHECK(many.bytes == 51059208);
    // R = 16, 3 objects of 16 bytes: 4.7459... and 75.9348...
    Unsampled small = unsample(3, 48, 16);
    CHECK(small.objects == 5);
    CHECK(small.bytes == 76);
}

TEST_CASE("heapkit::unsample at period 1 is (almost) the identity") {
    Unsampled exact = unsample(1000, 4096000, 1);
    CHECK(exact.objects == 1000);
    CHECK(exact.bytes == 4096000);
}

TEST_CASE("heapkit::unsample never divides by zero") {
    CHECK(unsample(0, 100, 512).objects == 0);
    CHECK(unsample(0, 100, 512).bytes == 0);
    CHECK(unsample(5, 0, 512).bytes == 0);
    CHECK(unsample(0, 0, 0).objects == 0);
    Unsampled zero_period = unsample(2, 64, 0); // treated as period 1
    CHECK(zero_period.objects == 2);
    CHECK(zero_period.bytes == 64);
}

TEST_CASE("heapkit::unsample saturates instead of overflowing") {
    constexpr uint64_t huge = std::numeric_limits<uint64_t>::max();
    Unsampled big = unsample(1, huge, 1);
    CHECK(big.bytes == std::numeric_limits<int64_t>::max());
    // A tiny average against a huge period makes the scale enormous.
    Unsampled tiny = unsample(huge, huge, huge);
    CHECK(tiny.objects == std::numeric_limits<int64_t>::max());
}

TEST_CASE("heapkit::unsample maps cur to inuse and accum to alloc") {
    HeapValues values = unsample(SampledCounts{1, 4096, 97, 406004}, 524288);
    CHECK(values.inuse_objects == 129);
    CHECK(values.inuse_space == 526339);
    CHECK(values.alloc_objects == 12199);
    CHECK(values.alloc_space == 51059208);
}
