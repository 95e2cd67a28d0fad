// SPDX-License-Identifier: MIT
// The peak watcher: a guest thread that samples this process's memory every interval and
// writes heap captures at its peaks and before the OOM killer's visit, into a directory
// that keeps them within a budget (README "After an OOM kill"; the agent's
// HEAPKIT_PEAKS_* settings, heapkit-agent(7)). Off unless started.
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace heapkit::runtime {

struct PeakOptions {
    std::string directory;             // made (0700) when missing; must be this user's alone
    std::string prefix;                // of the files' names; "" = the program's name
    unsigned interval_ms = 500;        // between samples, 10 to 60000
    bool watch_rss = false;            // the high-water mark of RSS rather than jemalloc's heap
    double growth_percent = 10;        // a new peak is this much over the last captured one
    uint64_t floor_bytes = 16u << 20;  // no peak capture below this
    unsigned min_interval_ms = 10'000; // at most one peak capture per window
    double danger_percent = 90;        // of the cgroup's limit (memory.high when lower); 0: off
    uint64_t danger_bytes = 0;         // RSS over this is danger; 0: off
    double danger_psi = 0;             // memory pressure "some avg10" over this is danger; 0: off
    int signal = 0;                    // a capture on this signal (SIGUSR1...); 0: none
    unsigned keep = 8;               // captures kept (the highest peak and last danger among them)
    uint64_t max_bytes = 256u << 20; // all captures' files within this (at least 64 KiB)
    uint64_t min_free_bytes = 64u << 20; // a capture leaves this much free on the disk
    // Where the watcher's lines go (a capture skipped, why it stopped); default: notices.
    std::function<void(const std::string&)> say;
};

// An error naming the setting for options that make no sense.
Result<void> check_peak_options(const PeakOptions& options);

// The running watcher; one per process (a second start is an error). Stops and joins
// when destroyed. Its thread blocks every signal and samples none of its allocations.
class PeakWatcher {
public:
    // Checks the options and the directory, installs the signal's handler (refused when
    // the host has one), and starts the thread.
    static Result<std::unique_ptr<PeakWatcher>> start(PeakOptions options);
    ~PeakWatcher();
    PeakWatcher(const PeakWatcher&) = delete;
    PeakWatcher& operator=(const PeakWatcher&) = delete;

    struct State;

private:
    explicit PeakWatcher(std::shared_ptr<State> state);
    std::shared_ptr<State> m_state;
};

// A capture now (the control request's), waited for up to `timeout_ms`: its name
// ("PREFIX.PID.SEQ.demand"), or why not (no watcher, a failure, the timeout).
Result<std::string> request_peak_capture(unsigned timeout_ms);

// The running watcher's directory and prefix; empty when none runs.
std::pair<std::string, std::string> peaks_location();

// Prometheus text: the captures by trigger, the skipped ones by reason, those deleted.
// "" when no watcher ever ran.
std::string peaks_metrics();

} // namespace heapkit::runtime
