// SPDX-License-Identifier: MIT
#include "heapkit/agent/agent_config.hpp"

#include <doctest/doctest.h>
#include <map>
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
