// SPDX-License-Identifier: MIT
#include "heapkit/runtime/peaks/peak_sample.hpp"
#include "heapkit/runtime/peaks/peak_triggers.hpp"

#include <doctest/doctest.h>

using namespace heapkit::runtime;

namespace {

constexpr uint64_t mib = 1 << 20;

MemorySample heap(uint64_t allocated) {
    MemorySample sample;
    sample.allocated = allocated;
    sample.rss = allocated + 4 * mib;
    return sample;
}

// Feeds `trigger` a sample and records a capture when it asks for one.
std::optional<Trigger> step(Triggers& triggers, const MemorySample& sample, int64_t now_ms) {
    auto decided = triggers.decide(sample, now_ms);
    if (decided) {
        triggers.captured(*decided, sample, now_ms);
    }
    return decided;
}

} // namespace

TEST_CASE("heapkit::runtime::Triggers: a climb is captured a few times and at its top") {
    Triggers triggers(TriggerOptions{false, 10, 16 * mib, 1000, 0, 0, 0});
    CHECK_FALSE(step(triggers, heap(8 * mib), 0)); // under the floor
    CHECK(step(triggers, heap(20 * mib), 100) == Trigger::peak);
    CHECK_FALSE(step(triggers, heap(21 * mib), 200)); // under 10 % more
    CHECK_FALSE(step(triggers, heap(30 * mib), 300)); // held back: the window is open at 1100
    CHECK_FALSE(step(triggers, heap(40 * mib), 900));
    CHECK(step(triggers, heap(40 * mib), 1100) == Trigger::peak); // at the window's end
    CHECK(triggers.last_peak() == 40 * mib);
    // A peak held back, then a fall below the last capture: nothing at the window's end.
    CHECK_FALSE(step(triggers, heap(50 * mib), 1200));
    CHECK_FALSE(step(triggers, heap(30 * mib), 2200));
    CHECK_FALSE(step(triggers, heap(30 * mib), 3300));
    CHECK(step(triggers, heap(45 * mib), 3400) == Trigger::peak); // the window is open
    // Held back, fallen back but still above the last capture: taken at the window's end.
    CHECK_FALSE(step(triggers, heap(60 * mib), 3500));
    CHECK(step(triggers, heap(50 * mib), 4400) == Trigger::peak);
    CHECK(triggers.last_peak() == 50 * mib);
}

TEST_CASE("heapkit::runtime::Triggers: danger once per crossing, at once") {
    Triggers triggers(TriggerOptions{false, 10, 1024 * mib, 10'000, 0.9, 0, 0});
    MemorySample sample = heap(10 * mib);
    sample.cgroup_limit = 100 * mib;
    sample.cgroup_usage = 50 * mib;
    CHECK_FALSE(step(triggers, sample, 0));
    sample.cgroup_usage = 91 * mib;
    CHECK(step(triggers, sample, 10) == Trigger::danger);
    CHECK_FALSE(step(triggers, sample, 20)); // the same crossing
    sample.cgroup_usage = 80 * mib;
    CHECK_FALSE(step(triggers, sample, 30));
    sample.cgroup_usage = 95 * mib;
    CHECK(step(triggers, sample, 40) == Trigger::danger); // a new one
    sample.cgroup_limit.reset();                          // no limit: no danger from it
    CHECK_FALSE(step(triggers, sample, 50));
    sample.cgroup_high = 100 * mib; // v2's memory.high, alone or below memory.max
    CHECK(step(triggers, sample, 60) == Trigger::danger);
    sample.cgroup_limit = 400 * mib;
    sample.cgroup_usage = 50 * mib;
    CHECK_FALSE(step(triggers, sample, 70));
    sample.cgroup_usage = 92 * mib;
    CHECK(step(triggers, sample, 80) == Trigger::danger);
}

TEST_CASE("heapkit::runtime::Triggers: RSS and pressure as danger") {
    Triggers triggers(TriggerOptions{true, 10, 1024 * mib, 10'000, 0, 64 * mib, 20});
    MemorySample sample = heap(10 * mib);
    sample.psi_some_avg10 = 25.5;
    CHECK(step(triggers, sample, 0) == Trigger::danger);
    sample.psi_some_avg10 = 1;
    CHECK_FALSE(step(triggers, sample, 10));
    sample.rss = 70 * mib;
    CHECK(step(triggers, sample, 20) == Trigger::danger);
}

TEST_CASE("heapkit::runtime: PSI and memory.events") {
    CHECK(parse_psi_some_avg10("some avg10=1.25 avg60=0.50 avg300=0.10 total=12345\n"
                               "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n") == 1.25);
    CHECK_FALSE(parse_psi_some_avg10("full avg10=1.00\n"));
    CHECK(parse_events_field("low 0\nhigh 2\nmax 7\noom 1\noom_kill 3\n", "oom_kill") == 3u);
    CHECK(parse_events_field("oom 1\noom_kill 3\n", "oom") == 1u);
    CHECK_FALSE(limit_or_none(9223372036854771712ull)); // v1's "no limit"
    CHECK(limit_or_none(100 * mib) == 100 * mib);
}
