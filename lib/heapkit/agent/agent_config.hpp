// SPDX-License-Identifier: MIT
// What libheapkit-agent.so is told, all of it from the environment (man heapkit-agent(7)):
// a preloaded library has no command line of its own.
#pragma once

#include "heapkit/runtime/peaks/peak_watcher.hpp"
#include "heapkit/util/error.hpp"

#include <functional>
#include <optional>
#include <string>

namespace heapkit::agent {

struct AgentConfig {
    std::string address = "127.0.0.1"; // HEAPKIT_LISTEN=ADDRESS:PORT, [IPv6]:PORT or :PORT
    int port = 6060;
    std::string token_file; // HEAPKIT_TOKEN_FILE: the bearer token, its first line
    // HEAPKIT_PUBLIC_NAME: beyond loopback (with a token), the host name clients use,
    // accepted in Host besides address literals (ServerOptions::public_name).
    std::string public_name;
    bool control = false;      // HEAPKIT_CONTROL=1: POST /pprof/conf may change the profiler
    bool cpu = true;           // HEAPKIT_CPU=0: no CPU profiles (no SIGPROF, ever)
    bool quiet = false;        // HEAPKIT_QUIET=1: nothing on stderr
    bool follow_forks = false; // HEAPKIT_FOLLOW_FORKS=1: a fork()ed child serves too
    // HEAPKIT_START_DELAY_MS: how long the agent waits, after it is loaded or after a
    // fork, before it opens any descriptor. Programs close every descriptor they did not
    // open early in main or right after fork (varnishd does both); a socket of ours made
    // before that would be closed under the server, and its number reused by the program.
    unsigned start_delay_ms = 1000;
};

// How the environment is read: getenv, or a table in tests.
using Environment = std::function<const char*(const char*)>;

// The configuration; an error names the variable and what it takes.
Result<AgentConfig> read_config(const Environment& environment);

// The peak watcher's settings (HEAPKIT_PEAKS_DIR and the HEAPKIT_PEAKS_* beside it,
// heapkit-agent(7)); nullopt when HEAPKIT_PEAKS_DIR is unset or empty. An error names the
// variable and what it takes (the agent then serves without the watcher).
Result<std::optional<runtime::PeakOptions>> read_peaks_config(const Environment& environment);

// The bearer token in `path`: its first line, without surrounding blanks; an error for
// an unreadable or empty file.
Result<std::string> read_token(const std::string& path);

} // namespace heapkit::agent
