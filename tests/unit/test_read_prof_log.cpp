// SPDX-License-Identifier: MIT
#include "heapkit/read/prof_log.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit;

namespace {

// A log as jemalloc 5.3's src/prof_log.c lays it out, with `allocations` spliced in.
std::string log_with(const std::string& allocations, const std::string& resolution = "high") {
    return R"({"info":{"duration":52000000,"version":"5.3.0-0-g0","lg_sample_rate":3,)"
           R"("prof_time_resolution":")" +
           resolution +
           R"(","pid":4242},"threads":[{"thr_uid":0,"thr_name":""},)"
           R"({"thr_uid":7,"thr_name":"worker one"}],)"
           R"("stack_traces":[["0x7f1e59aa2630","0x55d5f3e8b6e7"],["0x10"]],)"
           R"("allocations":[)" +
           allocations + "]}";
}

const std::string one_allocation =
    R"({"alloc_thread":0,"free_thread":1,"alloc_trace":0,"free_trace":1,)"
    R"("alloc_timestamp":1000,"free_timestamp":51000,"usize":4096})";

} // namespace

TEST_CASE("heapkit::parse_prof_log reads info, threads, traces and allocations") {
    auto log = parse_prof_log(log_with(one_allocation), "a.json");
    REQUIRE(log);
    CHECK(log->duration_nanos == 52000000);
    CHECK(log->version == "5.3.0-0-g0");
    CHECK(log->lg_sample_rate == 3);
    CHECK(log->sample_period() == 8);
    CHECK(log->time_resolution == "high");
    CHECK(log->pid == 4242);
    REQUIRE(log->threads.size() == 2);
    CHECK(log->threads[1].uid == 7);
    CHECK(log->threads[1].name == "worker one");
    REQUIRE(log->traces.size() == 2);
    CHECK(log->traces[0] == std::vector<uint64_t>{0x7f1e59aa2630, 0x55d5f3e8b6e7});
    REQUIRE(log->allocations.size() == 1);
    const LogAllocation& a = log->allocations[0];
    CHECK(a.alloc_thread == 0);
    CHECK(a.free_thread == 1);
    CHECK(a.alloc_trace == 0);
    CHECK(a.free_trace == 1);
    CHECK(a.lifetime_nanos() == 50000);
    CHECK(a.usize == 4096);
}

TEST_CASE("heapkit::parse_prof_log tells a cut log from a damaged one") {
    std::string whole = log_with(one_allocation);
    auto cut = parse_prof_log(whole.substr(0, whole.size() - 40), "cut.json");
    REQUIRE_FALSE(cut);
    CHECK(cut.error().message.find("cut.json: the allocation log ends early") == 0);
    std::string damaged = whole;
    damaged[8] = '#'; // the info object's brace
    auto bad = parse_prof_log(damaged, "bad.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "bad.json: not valid JSON at byte 9");
}

TEST_CASE("heapkit::parse_prof_log refuses indexes out of range and wrong members") {
    std::string far = one_allocation;
    far.replace(far.find("\"free_trace\":1"), 14, "\"free_trace\":2");
    auto out_of_range = parse_prof_log(log_with(far), "f.json");
    REQUIRE_FALSE(out_of_range);
    CHECK(out_of_range.error().message ==
          "f.json: allocations[0].free_trace is 2, but \"stack_traces\" has 2 entries");
    std::string negative = one_allocation;
    negative.replace(negative.find("\"usize\":4096"), 12, "\"usize\":-1");
    auto wrong = parse_prof_log(log_with(negative), "n.json");
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message == "n.json: allocations[0].usize: expected an unsigned number");
    auto stats = parse_prof_log(R"({"jemalloc":{}})", "s.json");
    REQUIRE_FALSE(stats);
    // jemalloc's statistics, not a log: said, with the tool that reads them.
    CHECK(stats.error().message ==
          "s.json: jemalloc's statistics (malloc_stats_print in JSON), not an allocation log: "
          "read it with jestat s.json");
    auto other = parse_prof_log(R"({"something":{}})", "o.json");
    REQUIRE_FALSE(other);
    CHECK(other.error().message.find("o.json: no \"info\" object") == 0);
}

TEST_CASE("heapkit::parse_prof_log takes a free before its allocation (clock stepped) as 0") {
    std::string backwards = one_allocation;
    backwards.replace(backwards.find("\"free_timestamp\":51000"), 22, "\"free_timestamp\":999");
    auto log = parse_prof_log(log_with(backwards), "b.json");
    REQUIRE(log);
    CHECK(log->allocations[0].lifetime_nanos() == 0);
}

TEST_CASE("heapkit::pid_in_file_name reads jemalloc's log and dump names") {
    CHECK(pid_in_file_name("/tmp/x/jeprof.4242.0.json") == 4242);
    CHECK(pid_in_file_name("my.prefix.17.3.f.heap") == 17);
    CHECK(pid_in_file_name("jeprof.17.3.i12.heap.gz") == 17);
    CHECK(pid_in_file_name("jeprof.17.3.m0.heap") == 17);
    CHECK(pid_in_file_name("/tmp/jeprof.14739.100.heap") == 14739); // named by hand, as jemalloc
    CHECK_FALSE(pid_in_file_name("x.100.heap"));
    CHECK_FALSE(pid_in_file_name("14739.100.heap"));
    CHECK_FALSE(pid_in_file_name("heap.prof"));
    CHECK_FALSE(pid_in_file_name("dump.heap"));
    CHECK_FALSE(pid_in_file_name("a.b.x.json"));
}

TEST_CASE("heapkit::looks_like_prof_log tells JSON from dumps") {
    CHECK(looks_like_prof_log(" \n{\"info\":"));
    CHECK_FALSE(looks_like_prof_log("heap_v2/524288\n"));
    CHECK_FALSE(looks_like_prof_log("--- symbol\n"));
    CHECK_FALSE(looks_like_prof_log(""));
}

TEST_CASE(
    "heapkit::parse_prof_log reads allocations wherever they stand, and refuses non-objects") {
    // jemalloc writes info, threads, stack_traces, allocations; indexes are checked once
    // all is read, so another order reads the same.
    std::string reordered =
        R"({"allocations":[)" + one_allocation +
        R"(],"info":{"duration":1,"version":"v","lg_sample_rate":0,)"
        R"("prof_time_resolution":"high","pid":1},)"
        R"("threads":[{"thr_uid":0,"thr_name":""},{"thr_uid":1,"thr_name":""}],)"
        R"("stack_traces":[["0x1"],["0x2"]]})";
    auto log = parse_prof_log(reordered, "r.json");
    REQUIRE(log);
    REQUIRE(log->allocations.size() == 1);
    CHECK(log->allocations[0].usize == 4096);
    auto number = parse_prof_log(log_with(one_allocation + ",7"), "7.json");
    REQUIRE_FALSE(number);
    CHECK(number.error().message == "7.json: allocations[1]: expected an object");
    auto missing = parse_prof_log(R"({"info":{"duration":1,"version":"v","lg_sample_rate":0,)"
                                  R"("prof_time_resolution":"high","pid":1},"threads":[],)"
                                  R"("stack_traces":[]})",
                                  "m.json");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("m.json: \"allocations\" is missing") == 0);
}
