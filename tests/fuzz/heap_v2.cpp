// SPDX-License-Identifier: MIT
// Any bytes as a dump: the reader must return a value or an error, and whatever it
// accepts must go through the model and both writers.
#include "heapkit/read/read_dump.hpp"
#include "profile_sink.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto dump = heapkit::parse_dump({reinterpret_cast<const char*>(data), size}, "fuzz.heap");
    if (dump) {
        heapkit::fuzz::consume(std::move(*dump));
    }
    return 0;
}
