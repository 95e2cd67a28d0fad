// SPDX-License-Identifier: MIT
// Any bytes as the debian-packages cache file (<cache>/debian-packages): the file lives
// in a directory the user owns, but it is still input, and damage must never crash.
#include "heapkit/symbolize/debug_files/debian_package.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto remembered = heapkit::parse_remembered_packages(
        std::string_view(reinterpret_cast<const char*>(data), size));
    if (remembered.size() > heapkit::most_remembered_packages) {
        __builtin_trap(); // the reader promised a bound
    }
    return 0;
}
