// SPDX-License-Identifier: MIT
// Lines the runtime has for the process's operator: what it cannot do and what to do
// about it (an indexer that fails, a cache it falls back from, stripped modules). A guest
// in someone else's process says little: each thing once per process, one line.
#pragma once

#include <functional>
#include <string>

namespace heapkit::runtime {

// Where notices go: by default "heapkit[<pid>]: <line>" on stderr, whole lines with
// write(2) (stderr's FILE is the host's), nothing when HEAPKIT_QUIET=1 (the agent's
// switch, which the runtime honours too). A program (or the agent) may route them to its
// own log; an empty function restores the default. Called from any thread.
void set_notice_sink(std::function<void(const std::string& line)> sink);

// `line` to the sink, the first time `key` is said in this process; later ones are
// dropped. Thread-safe.
void notice_once(const std::string& key, const std::string& line);

} // namespace heapkit::runtime
