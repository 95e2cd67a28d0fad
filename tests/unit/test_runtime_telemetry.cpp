// SPDX-License-Identifier: MIT
#include "heapkit/runtime/telemetry.hpp"

#include <doctest/doctest.h>

using namespace heapkit::runtime;

TEST_CASE("heapkit::runtime::parse_smaps_rollup reads kB fields as bytes") {
    auto fields = parse_smaps_rollup("55d0a0000000-7ffd1000 ---p 00000000 00:00 0  [rollup]\n"
                                     "Rss:               12345 kB\n"
                                     "Pss_Anon:           1000 kB\n"
                                     "Swap:                  0 kB\n"
                                     "Garbage line\n");
    CHECK(fields.at("Rss") == 12345u * 1024);
    CHECK(fields.at("Pss_Anon") == 1000u * 1024);
    CHECK(fields.at("Swap") == 0);
    CHECK(fields.size() == 3);
}

TEST_CASE("heapkit::runtime cgroup v2 parsing") {
    CHECK(cgroup_v2_path("12:memory:/old\n0::/system.slice/app.service\n") ==
          "/system.slice/app.service");
    CHECK_FALSE(cgroup_v2_path("12:memory:/old\n"));
    CHECK(parse_memory_value("1048576\n") == 1048576u);
    CHECK_FALSE(parse_memory_value("max\n"));
    auto stat = parse_memory_stat("anon 4096\nfile 8192\nunknown_field 1\nsock x\n");
    CHECK(stat.at("anon") == 4096);
    CHECK(stat.at("file") == 8192);
    CHECK(stat.size() == 2);
}

TEST_CASE("heapkit::runtime::to_prometheus names and types every value") {
    MemoryTelemetry telemetry;
    telemetry.jemalloc["allocated"] = 10;
    telemetry.smaps_rollup["Pss_Anon"] = 20;
    telemetry.cgroup["memory.current"] = 30;
    std::string text = to_prometheus(telemetry);
    CHECK(text.find("# TYPE heapkit_jemalloc_allocated_bytes gauge\n"
                    "heapkit_jemalloc_allocated_bytes 10\n") != std::string::npos);
    CHECK(text.find("heapkit_process_pss_anon_bytes 20\n") != std::string::npos);
    CHECK(text.find("heapkit_cgroup_memory_current_bytes 30\n") != std::string::npos);
}
