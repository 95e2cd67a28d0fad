// SPDX-License-Identifier: MIT
// The environment of a helper program a profiled process runs (heapkit-index): its own,
// without what would load a profiler into the helper.
#pragma once

#include <string>
#include <vector>

namespace heapkit {

// This process's environment without LD_PRELOAD, MALLOC_CONF and _RJEM_MALLOC_CONF:
// under the agent, LD_PRELOAD would start another server in the helper, and MALLOC_CONF
// would make it profile (and dump) itself.
std::vector<std::string> helper_environment();

// execve's view of `strings`: pointers into them, then a null. Valid while they are.
std::vector<char*> exec_pointers(std::vector<std::string>& strings);

} // namespace heapkit
