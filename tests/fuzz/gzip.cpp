// SPDX-License-Identifier: MIT
// Any bytes as gzip input; and any bytes must survive a gzip round trip unchanged.
#include "heapkit/util/gzip.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    static_cast<void>(heapkit::gunzip(bytes, "fuzz.gz"));
    auto round_trip = heapkit::gunzip(heapkit::gzip(bytes, 1), "fuzz.gz");
    if (!round_trip || *round_trip != bytes) {
        __builtin_trap();
    }
    return 0;
}
