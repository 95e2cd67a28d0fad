// SPDX-License-Identifier: MIT
#include "heapkit/growth/series_order.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace heapkit;

TEST_CASE("heapkit::parse_dump_name reads jemalloc's dump names") {
    auto name = parse_dump_name("/tmp/run.1/jeprof.4242.17.i12.heap");
    REQUIRE(name);
    CHECK(name->pid == 4242);
    CHECK(name->seq == 17);
    CHECK(parse_dump_name("jeprof.1.0.f.heap")->seq == 0);
    CHECK(parse_dump_name("my.prefix.7.3.m2.heap.gz")->pid == 7);
    CHECK(parse_dump_name("jeprof.7.3.u0.heap")->seq == 3);
    CHECK_FALSE(parse_dump_name("heap.prof"));
    CHECK_FALSE(parse_dump_name("7.3.i1.heap"));        // no prefix
    CHECK_FALSE(parse_dump_name("jeprof.7.x.i1.heap")); // no sequence number
    CHECK_FALSE(parse_dump_name("jeprof.7.3.i.heap"));  // i without its count
    CHECK_FALSE(parse_dump_name("jeprof.7.3.q1.heap")); // no such kind
    // libheapkit-runtime's peak watcher names its captures by trigger.
    CHECK(parse_dump_name("redis-server.4242.5.peak.heap")->seq == 5);
    CHECK(parse_dump_name("app.9.0.danger.heap")->pid == 9);
    CHECK(parse_dump_name("app.9.1.demand.heap")->seq == 1);
    CHECK_FALSE(parse_dump_name("app.9.1.peaks.heap"));
}

TEST_CASE("heapkit::series_order sorts by time, then by sequence number") {
    auto stamp = [](int64_t time, uint64_t seq) {
        return DumpStamp{time, DumpName{100, seq, {}, {}}, std::nullopt};
    };
    std::vector<DumpStamp> stamps{stamp(30, 5), stamp(10, 2), stamp(30, 4), stamp(20, 3)};
    CHECK(series_order(stamps) == std::vector<size_t>{1, 3, 2, 0});
    // One time unknown: the order given.
    stamps[2].time_nanos = 0;
    CHECK(series_order(stamps) == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("heapkit::series_order keeps a process's dumps together in a tick they share") {
    // One run ends as the next begins: its last dump and the next run's first share a time.
    std::vector<DumpStamp> stamps{
        {30, DumpName{200, 0, {}, {}}, 0x7000}, {40, DumpName{200, 1, {}, {}}, 0x7000},
        {10, DumpName{100, 0, {}, {}}, 0x5000}, {20, DumpName{100, 1, {}, {}}, 0x5000},
        {30, DumpName{100, 2, {}, {}}, 0x5000},
    };
    std::vector<size_t> order = series_order(stamps);
    CHECK(order == std::vector<size_t>{2, 3, 4, 0, 1});
    std::vector<DumpStamp> ordered;
    for (size_t i : order) {
        ordered.push_back(stamps[i]);
    }
    CHECK(run_bounds(ordered) == std::vector<size_t>{0, 3, 5});
}

TEST_CASE("heapkit::run_bounds starts a run where the pid or the load address changes") {
    std::vector<DumpStamp> stamps{
        {1, DumpName{100, 0, {}, {}}, 0x5000},
        {2, DumpName{100, 1, {}, {}}, 0x5000},
        {3, DumpName{200, 0, {}, {}}, 0x5000}, // another process, ASLR off
        {4, DumpName{200, 1, {}, {}}, 0x5000},
        {5, std::nullopt, 0x7000}, // renamed, moved
        {6, std::nullopt, 0x7000},
    };
    CHECK(run_bounds(stamps) == std::vector<size_t>{0, 2, 4, 6});
    CHECK(run_bounds(std::span(stamps).first(2)) == std::vector<size_t>{0, 2});
}

TEST_CASE("heapkit::concurrent_processes finds processes whose dumps interleave") {
    auto of = [](uint64_t pid, int64_t time) {
        return DumpStamp{time, DumpName{pid, 0, {}, {}}, {}};
    };
    std::vector<DumpStamp> after{of(7, 1), of(7, 2), of(9, 3), of(9, 4)};
    CHECK(concurrent_processes(after, run_bounds(after)).empty());
    std::vector<DumpStamp> together{of(7, 1), of(9, 2), of(7, 3), of(9, 4), of(9, 5)};
    auto processes = concurrent_processes(together, run_bounds(together));
    REQUIRE(processes.size() == 2);
    CHECK(processes[0].pid == 7u);
    CHECK(processes[0].dumps == std::vector<size_t>{0, 2});
    CHECK(processes[1].pid == 9u);
    CHECK(processes[1].dumps == std::vector<size_t>{1, 3, 4});
    // Without names, the program's load address tells the processes apart.
    std::vector<DumpStamp> unnamed{
        {1, std::nullopt, 0x1000}, {2, std::nullopt, 0x2000}, {3, std::nullopt, 0x1000}};
    processes = concurrent_processes(unnamed, run_bounds(unnamed));
    REQUIRE(processes.size() == 2);
    CHECK_FALSE(processes[0].pid);
    CHECK(processes[0].main_start == 0x1000u);
}
