// SPDX-License-Identifier: MIT
#include "heapkit/runtime/guest/serving_processes.hpp"

#include <mutex>

namespace heapkit::runtime {
namespace {

std::mutex g_mutex;
std::function<std::vector<ServingProcess>()>& source() {
    static auto* function = new std::function<std::vector<ServingProcess>()>(); // never freed:
    return *function; // pages may be served while the process exits
}

} // namespace

void set_serving_processes_source(std::function<std::vector<ServingProcess>()> function) {
    std::lock_guard lock(g_mutex);
    source() = std::move(function);
}

std::vector<ServingProcess> serving_processes() {
    std::function<std::vector<ServingProcess>()> function;
    {
        std::lock_guard lock(g_mutex);
        function = source();
    }
    return function ? function() : std::vector<ServingProcess>{};
}

} // namespace heapkit::runtime
