// SPDX-License-Identifier: MIT
// Any bytes as an address index file (the cache directory is writable by other programs,
// and a file can be cut short by a full disk): opening and looking up must stay inside
// the bytes, and whatever opens answers every lookup with frames or a clean "damaged".
#include "heapkit/symbolize/index/address_index.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto index = heapkit::AddressIndex::open(bytes, "fuzz.idx");
    if (!index) {
        return index.error().message.starts_with("fuzz.idx: ") ? 0 : (__builtin_trap(), 0);
    }
    // Every range's start and the address before it, and the extremes.
    for (size_t i = 0; i < index->range_count() && i < 4096; ++i) {
        uint64_t start = index->range_start(i);
        for (uint64_t vaddr : {start, start - 1}) {
            if (auto frames = index->frames_at(vaddr)) {
                for (const heapkit::Frame& frame : *frames) {
                    // The texts view the input: touching them is what ASan checks.
                    volatile size_t sum =
                        frame.name.size() + frame.system_name.size() + frame.file.size();
                    (void)sum;
                    if (!frame.name.empty() &&
                        (frame.name.data() < bytes.data() ||
                         frame.name.data() + frame.name.size() > bytes.data() + bytes.size())) {
                        __builtin_trap();
                    }
                }
            }
        }
    }
    (void)index->frames_at(0);
    (void)index->frames_at(UINT64_MAX);
    return 0;
}
