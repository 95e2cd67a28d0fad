// SPDX-License-Identifier: MIT
// heapkit-parse-bench DUMP [REPEATS]: heap_v2 parse throughput on one core.
// The input is read (and inflated) once; only parse_dump() is timed, REPEATS times.
// The rate is taken over the parsing thread's CPU time (median of the runs): on a shared
// machine wall time also counts the time other processes held the core. Wall time and
// the first run's time are printed as well.
#include "heapkit/read/read_dump.hpp"
#include "heapkit/util/input.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace {

double thread_cpu_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Timing {
    double cpu = 0;  // seconds of this thread's CPU time
    double wall = 0; // seconds
};

// One parse of `text`. The result is destroyed inside the timed region: freeing it is
// part of a real run's cost.
Timing time_one_parse(std::string_view text, const std::string& name) {
    double cpu_start = thread_cpu_seconds();
    auto wall_start = std::chrono::steady_clock::now();
    {
        auto dump = heapkit::parse_dump(text, name);
        if (!dump) {
            fmt::print(stderr, "heapkit-parse-bench: error: {}\n", dump.error().message);
            std::exit(1);
        }
    }
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
    return {thread_cpu_seconds() - cpu_start, wall.count()};
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        fmt::print(stderr, "usage: heapkit-parse-bench DUMP [REPEATS]\n");
        return 2;
    }
    int repeats = argc == 3 ? std::atoi(argv[2]) : 5;
    if (repeats < 1) {
        fmt::print(stderr, "heapkit-parse-bench: REPEATS must be a positive integer\n");
        return 2;
    }
    auto input = heapkit::read_input(argv[1]);
    if (!input) {
        fmt::print(stderr, "heapkit-parse-bench: error: {}\n", input.error().message);
        return 1;
    }
    std::string_view text = input->bytes;
    std::vector<double> cpu;
    std::vector<double> wall;
    for (int i = 0; i < repeats; ++i) {
        Timing one = time_one_parse(text, input->name);
        cpu.push_back(one.cpu);
        wall.push_back(one.wall);
    }
    // The first run starts with no memory to reuse, as a tool's one parse does; the later
    // ones may get the freed memory of the one before.
    auto [cpu_min, cpu_max] = std::minmax_element(cpu.begin(), cpu.end());
    fmt::print("runs: {}, CPU min {:.4f} s, max {:.4f} s, first {:.4f} s; wall median {:.4f} s\n",
               repeats, *cpu_min, *cpu_max, cpu.front(), median(wall));
    double seconds = median(cpu);
    fmt::print("parse: {} bytes, median {:.4f} s, {:.1f} MB/s\n", text.size(), seconds,
               static_cast<double>(text.size()) / seconds / 1e6);
    return 0;
}
