// SPDX-License-Identifier: MIT
#include "heapkit/util/huge_pages.hpp"

#include <atomic>

namespace heapkit {

namespace {
std::atomic<bool> heap_pages_allowed{false};
}

void allow_huge_heap_pages() {
    heap_pages_allowed.store(true, std::memory_order_relaxed);
}

bool huge_heap_pages_allowed() {
    return heap_pages_allowed.load(std::memory_order_relaxed);
}

} // namespace heapkit
