// SPDX-License-Identifier: MIT
// Any bytes as the agent's environment: lines for HEAPKIT_LISTEN, HEAPKIT_START_DELAY_MS,
// HEAPKIT_CPU and then the peak watcher's HEAPKIT_PEAKS_* (DIR first), in that order.
#include "heapkit/agent/agent_config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    constexpr std::array names = {"HEAPKIT_LISTEN",
                                  "HEAPKIT_START_DELAY_MS",
                                  "HEAPKIT_CPU",
                                  "HEAPKIT_PEAKS_DIR",
                                  "HEAPKIT_PEAKS_PREFIX",
                                  "HEAPKIT_PEAKS_WATCH",
                                  "HEAPKIT_PEAKS_INTERVAL_MS",
                                  "HEAPKIT_PEAKS_MIN_INTERVAL_MS",
                                  "HEAPKIT_PEAKS_GROWTH_PERCENT",
                                  "HEAPKIT_PEAKS_FLOOR",
                                  "HEAPKIT_PEAKS_DANGER_PERCENT",
                                  "HEAPKIT_PEAKS_DANGER_BYTES",
                                  "HEAPKIT_PEAKS_DANGER_PSI",
                                  "HEAPKIT_PEAKS_SIGNAL",
                                  "HEAPKIT_PEAKS_KEEP",
                                  "HEAPKIT_PEAKS_MAX_BYTES",
                                  "HEAPKIT_PEAKS_MIN_FREE"};
    std::array<std::string, names.size()> values;
    std::array<bool, names.size()> given{};
    std::string_view text(reinterpret_cast<const char*>(data), size);
    for (size_t i = 0; i < values.size() && !text.empty(); ++i) {
        size_t end = text.find('\n');
        values[i] = std::string(text.substr(0, end)).c_str(); // as getenv gives it: up to a NUL
        given[i] = true;
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    auto environment = [&](const char* name) -> const char* {
        for (size_t i = 0; i < names.size(); ++i) {
            if (std::strcmp(name, names[i]) == 0) {
                return given[i] ? values[i].c_str() : nullptr;
            }
        }
        return nullptr;
    };
    auto peaks = heapkit::agent::read_peaks_config(environment);
    if (peaks && *peaks && ((*peaks)->interval_ms < 10 || (*peaks)->keep < 1 ||
                            (*peaks)->max_bytes < (1u << 20) || (*peaks)->growth_percent <= 0)) {
        __builtin_trap(); // read_peaks_config promised settings inside their ranges
    }
    auto config = heapkit::agent::read_config(environment);
    if (config && (config->port < 0 || config->port > 65535 || config->address.empty() ||
                   config->start_delay_ms > 600'000)) {
        __builtin_trap(); // read_config promised a usable address, port and delay
    }
    return 0;
}
