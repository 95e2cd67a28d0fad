// SPDX-License-Identifier: MIT
// Any bytes as a page's query string (runtime/pages/page_query.cpp): split, decoded, and read
// as the CPU and heap pages read their parameters.
#include "heapkit/runtime/pages/page_query.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace heapkit::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view query(reinterpret_cast<const char*>(data), size);
    static constexpr std::string_view keys[] = {"seconds", "frequency", "symbolize",
                                                "sample",  "width",     "debug"};
    static_cast<void>(percent_decode(query));
    auto parsed = parse_query("/fuzz", query, keys);
    if (parsed) {
        static_cast<void>(query_number(*parsed, "seconds", 30, 1, 300));
        static_cast<void>(query_number(*parsed, "width", 1200, 10, 20000));
        static_cast<void>(query_flag(*parsed, "symbolize", true));
    }
    return 0;
}
