// SPDX-License-Identifier: MIT
// How a pool makes its threads: the caller's rules (the runtime's are a guest's: every
// signal blocked, sampling off; runtime/guest/threads.hpp), so the pools know none.
#pragma once

#include <functional>
#include <thread>

namespace heapkit {

// A running thread that calls `work`.
using StartThread = std::function<std::thread(std::function<void()> work)>;

} // namespace heapkit
