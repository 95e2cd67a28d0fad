// SPDX-License-Identifier: MIT
#include "heapkit/runtime/notices.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <set>
#include <string_view>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// Never destroyed: a server thread may say something while the process exits.
struct Notices {
    std::mutex mutex;
    std::function<void(const std::string&)> sink;
    std::set<std::string> said;
};

Notices& notices() {
    static auto* kept = new Notices;
    return *kept;
}

bool quiet() {
    const char* value = std::getenv("HEAPKIT_QUIET");
    std::string_view text = value != nullptr ? value : "";
    return text == "1" || text == "true" || text == "yes" || text == "on";
}

void to_stderr(const std::string& line) {
    if (quiet()) {
        return;
    }
    std::string text = fmt::format("heapkit[{}]: {}\n", ::getpid(), line);
    static_cast<void>(::write(STDERR_FILENO, text.data(), text.size()));
}

} // namespace

void set_notice_sink(std::function<void(const std::string& line)> sink) {
    std::lock_guard lock(notices().mutex);
    notices().sink = std::move(sink);
}

void notice_once(const std::string& key, const std::string& line) {
    std::function<void(const std::string&)> sink;
    {
        std::lock_guard lock(notices().mutex);
        if (!notices().said.insert(key).second) {
            return;
        }
        sink = notices().sink;
    }
    // Outside the lock: a sink may take its own locks, or say something itself.
    if (sink) {
        sink(line);
    } else {
        to_stderr(line);
    }
}

} // namespace heapkit::runtime
