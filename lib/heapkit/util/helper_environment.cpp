// SPDX-License-Identifier: MIT
#include "heapkit/util/helper_environment.hpp"

#include <string_view>

extern char** environ;

namespace heapkit {

std::vector<std::string> helper_environment() {
    std::vector<std::string> kept;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        if (!text.starts_with("LD_PRELOAD=") && !text.starts_with("MALLOC_CONF=") &&
            !text.starts_with("_RJEM_MALLOC_CONF=")) {
            kept.emplace_back(text);
        }
    }
    return kept;
}

std::vector<char*> exec_pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& text : strings) {
        out.push_back(text.data());
    }
    out.push_back(nullptr);
    return out;
}

} // namespace heapkit
