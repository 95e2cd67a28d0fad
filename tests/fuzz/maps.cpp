// SPDX-License-Identifier: MIT
// Any bytes as /proc/<pid>/maps lines.
#include "heapkit/read/maps.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    while (!text.empty()) {
        size_t end = text.find('\n');
        auto entry = heapkit::parse_maps_line(text.substr(0, end), "fuzz:1");
        if (entry && entry->end < entry->start) {
            __builtin_trap(); // the parser promised start <= end
        }
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    return 0;
}
