// SPDX-License-Identifier: MIT
#include "heapkit/read/raw_dump.hpp"

#include <algorithm>

namespace heapkit {

bool RawDump::has_accum() const {
    return total.has_accum() || std::any_of(stacks.begin(), stacks.end(),
                                            [](const RawStack& s) { return s.total.has_accum(); });
}

void RawDump::add_stack(std::span<const uint64_t> frame_addresses, const SampledCounts& counts,
                        std::span<const ThreadCounts> per_thread) {
    RawStack stack;
    stack.total = counts;
    stack.first_frame = static_cast<uint32_t>(frames.size());
    stack.frame_count = static_cast<uint32_t>(frame_addresses.size());
    stack.first_thread = static_cast<uint32_t>(stack_threads.size());
    stack.thread_count = static_cast<uint32_t>(per_thread.size());
    for (uint64_t address : frame_addresses) {
        frames.push_back(static_cast<uint32_t>(addresses.size()));
        addresses.push_back(address);
    }
    stack_threads.append(per_thread);
    stacks.push_back(stack);
}

std::string RawDump::main_path() const {
    for (const MapEntry& entry : maps) {
        if (!entry.path.empty() && entry.path.front() != '[') {
            return entry.path;
        }
    }
    return {};
}

} // namespace heapkit
