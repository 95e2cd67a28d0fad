// SPDX-License-Identifier: MIT
// Any bytes as the agent's environment: lines for HEAPKIT_LISTEN, HEAPKIT_START_DELAY_MS
// and HEAPKIT_CPU, in that order.
#include "heapkit/agent/agent_config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    constexpr std::array<const char*, 3> names = {"HEAPKIT_LISTEN", "HEAPKIT_START_DELAY_MS",
                                                  "HEAPKIT_CPU"};
    std::array<std::string, 3> values;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    for (std::string& value : values) {
        size_t end = text.find('\n');
        value = std::string(text.substr(0, end)).c_str(); // as getenv gives it: up to a NUL
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    auto config = heapkit::agent::read_config([&](const char* name) -> const char* {
        for (size_t i = 0; i < names.size(); ++i) {
            if (std::strcmp(name, names[i]) == 0) {
                return values[i].c_str();
            }
        }
        return nullptr;
    });
    if (config && (config->port < 0 || config->port > 65535 || config->address.empty() ||
                   config->start_delay_ms > 600'000)) {
        __builtin_trap(); // read_config promised a usable address, port and delay
    }
    return 0;
}
