// SPDX-License-Identifier: MIT
// Any bytes as a frame cache file (a cache directory is writable by other programs, and
// files can be cut short by a full disk); whatever decodes must encode back the same.
#include "heapkit/symbolize/index/frame_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    heapkit::StringPool strings; // per input: memory stays flat over a long run
    auto entries = heapkit::decode_frame_entries(bytes, strings);
    if (!entries) {
        return 0;
    }
    auto again = heapkit::decode_frame_entries(heapkit::encode_frame_entries(*entries), strings);
    if (!again || again->size() != entries->size()) {
        __builtin_trap();
    }
    entries->for_each([&](uint64_t vaddr, std::span<const heapkit::Frame> frames) {
        auto theirs = again->find(vaddr);
        if (!theirs || theirs->size() != frames.size()) {
            __builtin_trap();
        }
        for (size_t i = 0; i < frames.size(); ++i) {
            const heapkit::Frame& a = frames[i];
            const heapkit::Frame& b = (*theirs)[i];
            if (a.name != b.name || a.system_name != b.system_name || a.file != b.file ||
                a.line != b.line || a.column != b.column || a.start_line != b.start_line) {
                __builtin_trap();
            }
        }
    });
    return 0;
}
