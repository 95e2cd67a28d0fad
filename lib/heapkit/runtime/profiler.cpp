// SPDX-License-Identifier: MIT
#include "heapkit/runtime/profiler.hpp"

#include "heapkit/util/try.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

std::mutex dump_mutex;

Result<std::string> read_back(int fd, const std::string& name) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return fail("{}: {}", name, std::strerror(errno));
    }
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t got =
            ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return fail("{}: cannot read the dump back: {}", name,
                        got == 0 ? "unexpected end" : std::strerror(errno));
        }
        done += static_cast<size_t>(got);
    }
    return bytes;
}

} // namespace

Result<Profiler> Profiler::find() {
    return Mallctl::find().map([](Mallctl mallctl) { return Profiler(std::move(mallctl)); });
}

Result<Profiler> Profiler::find(std::string_view which) {
    return Mallctl::find(which).map([](Mallctl mallctl) { return Profiler(std::move(mallctl)); });
}

std::optional<Profiler> Profiler::of_own_allocations() {
    auto mallctl = Mallctl::own_allocations();
    return mallctl ? std::optional<Profiler>(Profiler(std::move(*mallctl))) : std::nullopt;
}

Result<bool> Profiler::enabled() const {
    return m_mallctl.read<bool>("opt.prof");
}

Result<void> Profiler::require_active() const {
    auto on = enabled();
    if (!on || !*on) {
        return fail("heap profiling is not enabled in {}: start the process with {}=prof:true",
                    m_mallctl.copy().object, m_mallctl.conf_variable());
    }
    auto now = active();
    if (!now || !*now) {
        return fail("heap profiling is enabled but not active: POST /pprof/conf?prof.active:true");
    }
    return {};
}

Result<bool> Profiler::active() const {
    return m_mallctl.read<bool>("prof.active");
}
Result<void> Profiler::set_active(bool active) const {
    return m_mallctl.write("prof.active", active);
}
Result<bool> Profiler::thread_active() const {
    return m_mallctl.read<bool>("thread.prof.active");
}
Result<void> Profiler::set_thread_active(bool active) const {
    return m_mallctl.write("thread.prof.active", active);
}
Result<void> Profiler::make_thread_a_guest() const {
    auto sampling = set_thread_active(false);
    auto cache = m_mallctl.write("thread.tcache.enabled", false);
    auto arena = m_mallctl.write("thread.arena", 0u);
    return !sampling ? sampling : !cache ? cache : arena;
}

Result<bool> Profiler::thread_active_init() const {
    return m_mallctl.read<bool>("prof.thread_active_init");
}
Result<void> Profiler::set_thread_active_init(bool active) const {
    return m_mallctl.write("prof.thread_active_init", active);
}
Result<std::string> Profiler::thread_name() const {
    // jemalloc keeps the string; copy it before another call can replace it.
    return m_mallctl.read<const char*>("thread.prof.name").map([](const char* name) {
        return std::string(name != nullptr ? name : "");
    });
}

Result<void> Profiler::set_thread_name(const std::string& name) const {
    return m_mallctl.write("thread.prof.name", name.c_str());
}
Result<size_t> Profiler::lg_sample() const {
    return m_mallctl.read<size_t>("prof.lg_sample");
}

Result<void> Profiler::reset(std::optional<size_t> lg_sample) const {
    if (lg_sample) {
        return m_mallctl.write("prof.reset", *lg_sample);
    }
    return m_mallctl.run("prof.reset");
}

Result<std::string> Profiler::dump(Check check) const {
    if (check == Check::active) {
        HEAPKIT_TRY(require_active());
    }
    std::lock_guard lock(dump_mutex);
    // jemalloc opens the file name it is given; /proc/self/fd/N reopens the memfd.
    UniqueFd fd(::memfd_create("heapkit-dump", MFD_CLOEXEC));
    std::string path;
    bool temporary = false;
    if (fd) {
        path = fmt::format("/proc/self/fd/{}", fd.get());
    } else {
        const char* dir = std::getenv("TMPDIR");
        path = fmt::format("{}/heapkit-dump-XXXXXX", dir != nullptr && *dir ? dir : "/tmp");
        fd.reset(::mkstemp(path.data()));
        if (!fd) {
            return fail("cannot create a file for the dump: {}", std::strerror(errno));
        }
        temporary = true;
    }
    const char* name = path.c_str();
    auto written = m_mallctl.write("prof.dump", name);
    auto bytes = written.and_then([&] { return read_back(fd.get(), path); });
    if (temporary) {
        ::unlink(path.c_str());
    }
    return bytes;
}

} // namespace heapkit::runtime
