// SPDX-License-Identifier: MIT
// HEAPKIT_PEAKS_*: the peak watcher's settings from the environment (heapkit-agent(7)).
#include "heapkit/agent/agent_config.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/try.hpp"

#include <charconv>
#include <csignal>
#include <limits>
#include <optional>
#include <string_view>

namespace heapkit::agent {
namespace {

const char* value_of(const Environment& environment, const char* name) {
    const char* value = environment(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// A whole number in [low, high]; the error names the variable and the range.
Result<void> read_number(const Environment& environment, const char* name, uint64_t low,
                         uint64_t high, auto& target) {
    const char* value = value_of(environment, name);
    if (value == nullptr) {
        return {};
    }
    std::string_view rest = value;
    auto number = take_decimal(rest);
    if (!number || !rest.empty() || *number < low || *number > high) {
        return fail("{}={}: expected a whole number from {} to {}", name, value, low, high);
    }
    target = static_cast<std::remove_reference_t<decltype(target)>>(*number);
    return {};
}

// Bytes: a whole number with an optional K, M or G (powers of 1024).
Result<void> read_bytes(const Environment& environment, const char* name, uint64_t& target) {
    const char* value = value_of(environment, name);
    if (value == nullptr) {
        return {};
    }
    std::string_view unit = value;
    auto number = take_decimal(unit);
    int shift = unit.empty()                 ? 0
                : unit == "K" || unit == "k" ? 10
                : unit == "M"                ? 20
                : unit == "G"                ? 30
                                             : -1;
    if (!number || shift < 0 || *number > (std::numeric_limits<uint64_t>::max() >> 30)) {
        return fail("{}={}: expected bytes, such as 512M (K, M, G: powers of 1024)", name, value);
    }
    target = *number << shift;
    return {};
}

// A decimal number in [0, high].
Result<void> read_decimal(const Environment& environment, const char* name, double high,
                          double& target) {
    const char* value = value_of(environment, name);
    if (value == nullptr) {
        return {};
    }
    std::string_view text = value;
    double number = 0;
    auto parsed = std::from_chars(text.data(), text.data() + text.size(), number);
    if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() || !(number >= 0) ||
        number > high) {
        return fail("{}={}: expected a number from 0 to {}", name, text, high);
    }
    target = number;
    return {};
}

// USR1, USR2 (SIG optional) or RTMIN+N: signals with no meaning of their own. Never
// SIGPROF (the CPU profiler's) nor one a program or the kernel means something by.
Result<void> read_signal(const Environment& environment, int& target) {
    const char* value = value_of(environment, "HEAPKIT_PEAKS_SIGNAL");
    if (value == nullptr) {
        return {};
    }
    std::string_view text = value;
    std::string_view name = text.starts_with("SIG") ? text.substr(3) : text;
    int offset = -1;
    if (name == "USR1") {
        target = SIGUSR1;
        return {};
    }
    if (name == "USR2") {
        target = SIGUSR2;
        return {};
    }
    if (name.starts_with("RTMIN+")) {
        std::string_view digits = name.substr(6);
        auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), offset);
        if (parsed.ec == std::errc() && parsed.ptr == digits.data() + digits.size() &&
            offset >= 0 && SIGRTMIN + offset <= SIGRTMAX) {
            target = SIGRTMIN + offset;
            return {};
        }
    }
    return fail("HEAPKIT_PEAKS_SIGNAL={}: expected USR1, USR2 or RTMIN+N (never PROF nor a "
                "signal with a meaning of its own)",
                text);
}

} // namespace

Result<std::optional<runtime::PeakOptions>> read_peaks_config(const Environment& environment) {
    const char* directory = value_of(environment, "HEAPKIT_PEAKS_DIR");
    if (directory == nullptr) {
        return std::nullopt;
    }
    runtime::PeakOptions options;
    options.directory = directory;
    if (const char* prefix = value_of(environment, "HEAPKIT_PEAKS_PREFIX")) {
        options.prefix = prefix;
    }
    if (const char* watch = value_of(environment, "HEAPKIT_PEAKS_WATCH")) {
        std::string_view text = watch;
        if (text != "heap" && text != "rss") {
            return fail("HEAPKIT_PEAKS_WATCH={}: expected heap or rss", text);
        }
        options.watch_rss = text == "rss";
    }
    HEAPKIT_TRY(
        read_number(environment, "HEAPKIT_PEAKS_INTERVAL_MS", 10, 60'000, options.interval_ms));
    HEAPKIT_TRY(read_number(environment, "HEAPKIT_PEAKS_MIN_INTERVAL_MS", 0, 86'400'000,
                            options.min_interval_ms));
    HEAPKIT_TRY(
        read_decimal(environment, "HEAPKIT_PEAKS_GROWTH_PERCENT", 10'000, options.growth_percent));
    if (options.growth_percent <= 0) {
        return fail("HEAPKIT_PEAKS_GROWTH_PERCENT=0: expected more than 0");
    }
    HEAPKIT_TRY(read_bytes(environment, "HEAPKIT_PEAKS_FLOOR", options.floor_bytes));
    HEAPKIT_TRY(
        read_decimal(environment, "HEAPKIT_PEAKS_DANGER_PERCENT", 100, options.danger_percent));
    HEAPKIT_TRY(read_bytes(environment, "HEAPKIT_PEAKS_DANGER_BYTES", options.danger_bytes));
    HEAPKIT_TRY(read_decimal(environment, "HEAPKIT_PEAKS_DANGER_PSI", 100, options.danger_psi));
    HEAPKIT_TRY(read_signal(environment, options.signal));
    HEAPKIT_TRY(read_number(environment, "HEAPKIT_PEAKS_KEEP", 1, 10'000, options.keep));
    HEAPKIT_TRY(read_bytes(environment, "HEAPKIT_PEAKS_MAX_BYTES", options.max_bytes));
    if (options.max_bytes < (1u << 20)) {
        return fail("HEAPKIT_PEAKS_MAX_BYTES={}: expected at least 1M",
                    value_of(environment, "HEAPKIT_PEAKS_MAX_BYTES"));
    }
    HEAPKIT_TRY(read_bytes(environment, "HEAPKIT_PEAKS_MIN_FREE", options.min_free_bytes));
    return options;
}

} // namespace heapkit::agent
