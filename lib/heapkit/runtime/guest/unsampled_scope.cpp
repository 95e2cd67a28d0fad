// SPDX-License-Identifier: MIT
#include "heapkit/runtime/guest/unsampled_scope.hpp"

namespace heapkit::runtime {

UnsampledScope::UnsampledScope() {
    auto profiler = Profiler::of_own_allocations();
    if (!profiler) {
        return;
    }
    if (auto active = profiler->thread_active();
        active && *active && profiler->set_thread_active(false)) {
        m_paused = std::move(*profiler);
    }
}

UnsampledScope::~UnsampledScope() {
    if (m_paused) {
        static_cast<void>(m_paused->set_thread_active(true));
    }
}

} // namespace heapkit::runtime
