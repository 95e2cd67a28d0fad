// SPDX-License-Identifier: MIT
#include "heapkit/agent/agent_config.hpp"

#include <csignal>
#include <doctest/doctest.h>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace heapkit::agent;

namespace {

heapkit::Result<AgentConfig> config_of(std::map<std::string, std::string> variables) {
    return read_config([&](const char* name) -> const char* {
        auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
    });
}

} // namespace

TEST_CASE("heapkit::agent::read_config: defaults, every variable, and what it refuses") {
    auto defaults = config_of({});
    REQUIRE(defaults);
    CHECK(defaults->address == "127.0.0.1");
    CHECK(defaults->port == 6060);
    CHECK(!defaults->control);
    CHECK(defaults->cpu);
    CHECK(!defaults->follow_forks);
    CHECK(defaults->start_delay_ms == 1000);

    auto all = config_of({{"HEAPKIT_LISTEN", "[::1]:7070"},
                          {"HEAPKIT_TOKEN_FILE", "/run/token"},
                          {"HEAPKIT_CONTROL", "yes"},
                          {"HEAPKIT_CPU", "off"},
                          {"HEAPKIT_QUIET", "1"},
                          {"HEAPKIT_FOLLOW_FORKS", "true"},
                          {"HEAPKIT_START_DELAY_MS", "0"}});
    REQUIRE(all);
    CHECK(all->address == "::1");
    CHECK(all->port == 7070);
    CHECK(all->token_file == "/run/token");
    CHECK(all->control);
    CHECK(!all->cpu);
    CHECK(all->quiet);
    CHECK(all->follow_forks);
    CHECK(all->start_delay_ms == 0);

    auto port_only = config_of({{"HEAPKIT_LISTEN", ":0"}});
    REQUIRE(port_only);
    CHECK(port_only->address == "127.0.0.1");
    CHECK(port_only->port == 0);

    auto everything = config_of({{"HEAPKIT_PUBLIC_NAME", "db7.example.net"}});
    REQUIRE(everything);
    CHECK(everything->public_name == "db7.example.net");

    // Pairs, not a map: several values of one variable are each refused.
    for (auto [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"HEAPKIT_LISTEN", "6060"},
                                                          {"HEAPKIT_LISTEN", "localhost:6060"},
                                                          {"HEAPKIT_LISTEN", "[localhost]:6060"},
                                                          {"HEAPKIT_LISTEN", "127.0.0.1:65536"},
                                                          {"HEAPKIT_LISTEN", "127.0.0.1:"},
                                                          {"HEAPKIT_LISTEN", "127.0.0.1:60x"},
                                                          {"HEAPKIT_CPU", "maybe"},
                                                          {"HEAPKIT_START_DELAY_MS", "-1"},
                                                          {"HEAPKIT_START_DELAY_MS", "600001"}}) {
        auto refused = config_of({{name, value}});
        REQUIRE_MESSAGE(!refused, name, "=", value);
        CHECK(refused.error().message.find(name) != std::string::npos);
    }
}

namespace {

heapkit::Result<std::optional<heapkit::runtime::PeakOptions>>
peaks_of(std::map<std::string, std::string> variables) {
    return read_peaks_config([&](const char* name) -> const char* {
        auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
    });
}

} // namespace

TEST_CASE("heapkit::agent::read_peaks_config: off by default, every setting, what it refuses") {
    auto off = peaks_of({});
    REQUIRE(off);
    CHECK_FALSE(*off);
    auto on = peaks_of({{"HEAPKIT_PEAKS_DIR", "/var/lib/app/peaks"},
                        {"HEAPKIT_PEAKS_PREFIX", "app"},
                        {"HEAPKIT_PEAKS_INTERVAL_MS", "250"},
                        {"HEAPKIT_PEAKS_WATCH", "rss"},
                        {"HEAPKIT_PEAKS_GROWTH_PERCENT", "12.5"},
                        {"HEAPKIT_PEAKS_FLOOR", "32M"},
                        {"HEAPKIT_PEAKS_MIN_INTERVAL_MS", "5000"},
                        {"HEAPKIT_PEAKS_DANGER_PERCENT", "85"},
                        {"HEAPKIT_PEAKS_DANGER_BYTES", "2G"},
                        {"HEAPKIT_PEAKS_DANGER_PSI", "40"},
                        {"HEAPKIT_PEAKS_SIGNAL", "SIGUSR2"},
                        {"HEAPKIT_PEAKS_KEEP", "4"},
                        {"HEAPKIT_PEAKS_MAX_BYTES", "100M"},
                        {"HEAPKIT_PEAKS_MIN_FREE", "1G"}});
    REQUIRE(on);
    REQUIRE(*on);
    const auto& o = **on;
    CHECK(o.directory == "/var/lib/app/peaks");
    CHECK(o.prefix == "app");
    CHECK(o.interval_ms == 250);
    CHECK(o.watch_rss);
    CHECK(o.growth_percent == 12.5);
    CHECK(o.floor_bytes == 32u << 20);
    CHECK(o.min_interval_ms == 5000);
    CHECK(o.danger_percent == 85);
    CHECK(o.danger_bytes == uint64_t{2} << 30);
    CHECK(o.danger_psi == 40);
    CHECK(o.signal == SIGUSR2);
    CHECK(o.keep == 4);
    CHECK(o.max_bytes == 100u << 20);
    CHECK(o.min_free_bytes == uint64_t{1} << 30);
    for (auto [name, value] :
         std::vector<std::pair<std::string, std::string>>{{"HEAPKIT_PEAKS_INTERVAL_MS", "5"},
                                                          {"HEAPKIT_PEAKS_WATCH", "vsz"},
                                                          {"HEAPKIT_PEAKS_GROWTH_PERCENT", "0"},
                                                          {"HEAPKIT_PEAKS_GROWTH_PERCENT", "lots"},
                                                          {"HEAPKIT_PEAKS_FLOOR", "12T"},
                                                          {"HEAPKIT_PEAKS_DANGER_PERCENT", "120"},
                                                          {"HEAPKIT_PEAKS_SIGNAL", "PROF"},
                                                          {"HEAPKIT_PEAKS_SIGNAL", "TERM"},
                                                          {"HEAPKIT_PEAKS_KEEP", "0"},
                                                          {"HEAPKIT_PEAKS_MAX_BYTES", "10K"}}) {
        auto refused = peaks_of({{"HEAPKIT_PEAKS_DIR", "/tmp/x"}, {name, value}});
        REQUIRE_FALSE(refused);
        CAPTURE(refused.error().message);
        CHECK(refused.error().message.find(name + "=" + value) == 0);
    }
}
