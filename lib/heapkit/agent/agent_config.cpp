// SPDX-License-Identifier: MIT
#include "heapkit/agent/agent_config.hpp"

#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <sys/stat.h>
#include <netinet/in.h>
#include <string_view>

namespace heapkit::agent {
namespace {

Result<bool> read_flag(const Environment& environment, const char* name, bool fallback) {
    const char* value = environment(name);
    if (value == nullptr || *value == '\0') {
        return fallback;
    }
    std::string_view text = value;
    if (text == "1" || text == "true" || text == "yes" || text == "on") {
        return true;
    }
    if (text == "0" || text == "false" || text == "no" || text == "off") {
        return false;
    }
    return fail("{}={}: expected 1 or 0", name, text);
}

// ADDRESS:PORT, [IPv6]:PORT or :PORT (loopback). The address stays numeric: the server
// resolves no names.
Result<void> read_listen(std::string_view text, AgentConfig& config) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
        return fail("HEAPKIT_LISTEN={}: expected ADDRESS:PORT, [IPv6]:PORT or :PORT", text);
    }
    std::string_view host = text.substr(0, colon);
    std::string_view port = text.substr(colon + 1);
    int number = -1;
    auto parsed = std::from_chars(port.data(), port.data() + port.size(), number);
    if (port.empty() || parsed.ec != std::errc() || parsed.ptr != port.data() + port.size() ||
        number < 0 || number > 65535) {
        return fail("HEAPKIT_LISTEN={}: the port must be a number from 0 to 65535", text);
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    if (!host.empty()) {
        // The server resolves no names: "localhost" would be a lookup (and could name
        // an address beyond loopback).
        std::string numeric(host);
        unsigned char address[sizeof(in6_addr)];
        if (inet_pton(AF_INET, numeric.c_str(), address) != 1 &&
            inet_pton(AF_INET6, numeric.c_str(), address) != 1) {
            return fail("HEAPKIT_LISTEN={}: the address must be numeric, such as 127.0.0.1 "
                        "or [::1] (no name is resolved)",
                        text);
        }
        config.address = std::move(numeric);
    }
    config.port = number;
    return {};
}

} // namespace

Result<AgentConfig> read_config(const Environment& environment) {
    AgentConfig config;
    if (const char* listen = environment("HEAPKIT_LISTEN"); listen != nullptr && *listen != '\0') {
        HEAPKIT_TRY(read_listen(listen, config));
    }
    if (const char* token = environment("HEAPKIT_TOKEN_FILE"); token != nullptr) {
        config.token_file = token;
    }
    if (const char* name = environment("HEAPKIT_PUBLIC_NAME"); name != nullptr) {
        config.public_name = name;
    }
    HEAPKIT_TRY_ASSIGN(config.control, read_flag(environment, "HEAPKIT_CONTROL", false));
    HEAPKIT_TRY_ASSIGN(config.cpu, read_flag(environment, "HEAPKIT_CPU", true));
    HEAPKIT_TRY_ASSIGN(config.quiet, read_flag(environment, "HEAPKIT_QUIET", false));
    HEAPKIT_TRY_ASSIGN(config.follow_forks, read_flag(environment, "HEAPKIT_FOLLOW_FORKS", false));
    if (const char* delay = environment("HEAPKIT_START_DELAY_MS");
        delay != nullptr && *delay != '\0') {
        std::string_view text = delay;
        auto parsed =
            std::from_chars(text.data(), text.data() + text.size(), config.start_delay_ms);
        if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() ||
            config.start_delay_ms > 600'000) {
            return fail("HEAPKIT_START_DELAY_MS={}: expected milliseconds, 0 to 600000", text);
        }
    }
    return config;
}

Result<std::string> read_token(const std::string& path) {
    // A secret every user can read is none (ssh refuses such keys alike). The group may
    // read it: a service's operators share one.
    struct stat file {};
    if (::stat(path.c_str(), &file) == 0 && S_ISREG(file.st_mode) &&
        (file.st_mode & (S_IROTH | S_IWOTH)) != 0) {
        return fail("{}: the token file is readable by every user of the machine (mode {:04o}): "
                    "chmod o-rw {}",
                    path, file.st_mode & 07777, path);
    }
    HEAPKIT_TRY_ASSIGN(auto input, read_input(path));
    std::string_view text = input.bytes;
    text = text.substr(0, text.find('\n'));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    if (text.empty()) {
        return fail("{}: the token file's first line is empty", path);
    }
    return std::string(text);
}

} // namespace heapkit::agent
