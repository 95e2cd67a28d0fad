// SPDX-License-Identifier: MIT
// Any bytes after a "--- symbol" line: the jeprof symbolized-file reader.
#include "heapkit/read/read_dump.hpp"
#include "profile_sink.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text = "--- symbol\n";
    text.append(reinterpret_cast<const char*>(data), size);
    auto dump = heapkit::parse_dump(text, "fuzz.prof");
    if (dump) {
        heapkit::fuzz::consume(std::move(*dump));
    }
    return 0;
}
