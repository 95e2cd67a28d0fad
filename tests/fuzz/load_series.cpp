// SPDX-License-Identifier: MIT
// Any bytes as a series of dumps (--growth): the input is cut at each "\n%%\n" into up
// to 8 dumps held in memory, loaded without naming frames (no file is opened) and put in
// the order they were written. Ordering, the same-program check and the report merge
// must never crash.
#include "heapkit/load/load.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> names;
    std::vector<std::string_view> parts;
    constexpr std::string_view separator = "\n%%\n";
    while (parts.size() < 8) {
        size_t end = text.find(separator);
        parts.push_back(text.substr(0, end));
        if (end == std::string_view::npos) {
            break;
        }
        text.remove_prefix(end + separator.size());
    }
    std::vector<heapkit::Input> inputs;
    for (size_t i = 0; i < parts.size(); ++i) {
        // Names as jemalloc gives them: their sequence numbers order dumps of unknown time.
        inputs.push_back({"jeprof.1." + std::to_string(parts.size() - i) + ".i0.heap", parts[i]});
    }
    heapkit::LoadOptions options;
    options.symbols.names = false;
    options.max_inflated = 64 << 20; // libFuzzer's memory limit, not the tools'
    static_cast<void>(heapkit::load_series(inputs, options));
    return 0;
}
