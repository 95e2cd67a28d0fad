// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/log_page.hpp"

#include "heapkit/emit/writers.hpp"
#include "heapkit/runtime/export/export.hpp"
#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// A log holds a thread of its own and jemalloc's log (one per process) this long at most.
constexpr unsigned max_log_seconds = 60;

constexpr std::string_view log_keys[] = {"seconds",    "format",    "sample",
                                         "free_sites", "symbolize", "width"};

enum class LogFormat { pprof, text, svg, lifetimes };

struct LogRequest {
    unsigned seconds = 10;
    LogFormat format = LogFormat::pprof;
    SampleType sample = SampleType::alloc_space;
    LogBuildOptions build;
    bool names = true;
    unsigned width = 1200;
};

Result<LogRequest> parse_log(const Request& request) {
    HEAPKIT_TRY_ASSIGN(auto query, parse_query(request.path, request.query, log_keys));
    LogRequest log;
    HEAPKIT_TRY_ASSIGN(log.seconds, query_number(query, "seconds", 10, 1, max_log_seconds));
    HEAPKIT_TRY_ASSIGN(log.build.by_free_site, query_flag(query, "free_sites", false));
    HEAPKIT_TRY_ASSIGN(log.names, query_flag(query, "symbolize", true));
    HEAPKIT_TRY_ASSIGN(log.width,
                       query_number(query, "width", 1200, FlameOptions::min_width, 20000));
    if (query.count("format")) {
        const std::string& format = query.at("format");
        if (format == "text") {
            log.format = LogFormat::text;
        } else if (format == "svg") {
            log.format = LogFormat::svg;
        } else if (format == "lifetimes") {
            log.format = LogFormat::lifetimes;
        } else if (format != "pprof") {
            return fail("format={}: expected pprof, text, svg or lifetimes", format);
        }
    }
    if (query.count("sample")) {
        auto sample = parse_sample_type(query.at("sample"));
        if (!sample || (!needs_accum(*sample) && !is_log_type(*sample))) {
            return fail("sample={}: expected alloc_space, alloc_objects, temporary_objects, "
                        "temporary_space, byte_seconds, cross_thread_objects or "
                        "cross_thread_space",
                        query.at("sample"));
        }
        log.sample = *sample;
    }
    return log;
}

// jemalloc keeps one log per process: this page takes it one request at a time.
class LogSlot {
public:
    static std::optional<LogSlot> claim() {
        if (busy().exchange(true)) {
            return std::nullopt;
        }
        return LogSlot();
    }
    LogSlot(LogSlot&& other) noexcept
        : m_held(std::exchange(other.m_held, false)) {}
    LogSlot& operator=(LogSlot&&) = delete;
    ~LogSlot() {
        if (m_held) {
            busy() = false;
        }
    }

private:
    LogSlot() = default;
    static std::atomic<bool>& busy() {
        static std::atomic<bool> flag{false};
        return flag;
    }
    bool m_held = true;
};

// A directory only this process's user can enter, removed with the log in it.
class PrivateDirectory {
public:
    static Result<PrivateDirectory> make() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = fmt::format("{}/heapkit-log-XXXXXX", base && *base ? base : "/tmp");
        if (::mkdtemp(pattern.data()) == nullptr) {
            return fail_system(errno, "cannot make a directory for the log ({}): {}", pattern,
                               std::strerror(errno));
        }
        return PrivateDirectory(std::move(pattern));
    }
    PrivateDirectory(PrivateDirectory&& other) noexcept
        : m_path(std::exchange(other.m_path, std::string())) {}
    PrivateDirectory& operator=(PrivateDirectory&&) = delete;
    ~PrivateDirectory() {
        if (!m_path.empty()) {
            ::unlink(file().c_str());
            ::rmdir(m_path.c_str());
        }
    }
    std::string file() const { return m_path + "/log.json"; }

private:
    explicit PrivateDirectory(std::string path)
        : m_path(std::move(path)) {}
    std::string m_path;
};

// True when jemalloc's configuration asked for a log from startup (prof_log:true): 5.3 has
// no opt.prof_log to read, so its sources are: the malloc_conf symbol the program may
// define, then the copy's variable (MALLOC_CONF; later ones override).
bool log_from_startup(const Mallctl& mallctl) {
    bool on = false;
    auto scan = [&](const char* conf) {
        std::string_view rest = conf == nullptr ? "" : conf;
        while (!rest.empty()) {
            std::string_view option = rest.substr(0, rest.find(','));
            rest.remove_prefix(std::min(rest.size(), option.size() + 1));
            if (option.starts_with("prof_log:")) {
                on = option == "prof_log:true";
            }
        }
    };
    // jemalloc reads the first malloc_conf in symbol lookup (the program's own, where it
    // defines one): for a copy in a library, that is dlsym's; a static copy's is its own.
    const JemallocCopy& copy = mallctl.copy();
    std::string name = std::string(copy.prefix) + "malloc_conf";
    const char* const* conf =
        copy.in_executable ? copy.malloc_conf
                           : static_cast<const char* const*>(::dlsym(RTLD_DEFAULT, name.c_str()));
    if (conf != nullptr) {
        scan(*conf);
    }
    scan(std::getenv(mallctl.conf_variable().c_str()));
    return on;
}

// Why prof.log_start failed, for the user: jemalloc answers EFAULT ("Bad address") when a
// log is already running, whoever started it: MALLOC_CONF=prof_log:true at startup, or
// the program itself.
Error log_start_refused(const Mallctl& mallctl, const Error& error) {
    if (log_from_startup(mallctl)) {
        return Error{
            "an allocation log is already running in this process: " + mallctl.conf_variable() +
            "=prof_log:true started one at startup, which jemalloc "
            "writes at exit (jeprof.<pid>.<seq>.json). Stop it first: the program "
            "calls mallctl(\"prof.log_stop\", NULL, NULL, NULL, 0), which writes it "
            "now; or start the process without prof_log:true and ask this page "
            "(jemalloc: " +
            error.message + ")"};
    }
    return Error{"an allocation log is already running in this process (the program started "
                 "one with prof.log_start); ask again when it has stopped (prof.log_stop) "
                 "(jemalloc: " +
                 error.message + ")"};
}

// prof.log_start into `path`, the wait, prof.log_stop (whatever happened meanwhile).
Result<void> log_for(const Mallctl& mallctl, const std::string& path, const LogRequest& log,
                     const Request& request) {
    if (auto started = mallctl.write("prof.log_start", path.c_str()); !started) {
        return tl::unexpected(log_start_refused(mallctl, started.error()));
    }
    if (request.wait) {
        request.wait(std::chrono::seconds(log.seconds));
    } else {
        std::this_thread::sleep_for(std::chrono::seconds(log.seconds));
    }
    return mallctl.run("prof.log_stop");
}

Response answer(const Profile& profile, const LogRequest& log) {
    FoldedOptions folded;
    folded.sample = log.sample;
    std::string body;
    auto sink = [&](std::string_view piece) -> Result<void> {
        body += piece;
        return {};
    };
    Result<void> written;
    switch (log.format) {
    case LogFormat::pprof: {
        PprofOptions pprof;
        pprof.default_type = log.sample;
        auto bytes = write_pprof(profile, pprof);
        return bytes ? binary(std::move(*bytes), "application/octet-stream", "log.pb.gz")
                     : text(500, bytes.error().message);
    }
    case LogFormat::text:
        written = write_log_report(profile, folded, {}, sink);
        return written ? text(200, std::move(body)) : text(500, written.error().message);
    case LogFormat::lifetimes:
        written = write_lifetime_chart(profile, folded, {8, log.width}, sink);
        return written ? binary(std::move(body), "image/svg+xml", "")
                       : text(500, written.error().message);
    case LogFormat::svg:
        FlameOptions flame;
        flame.width = log.width;
        flame.title = fmt::format("Allocation log: {} over {} s", name_of(log.sample),
                                  static_cast<double>(profile.duration_nanos) / 1e9);
        written = write_flame_graph(profile, folded, flame, sink);
        return written ? binary(std::move(body), "image/svg+xml", "")
                       : text(500, written.error().message);
    }
    return text(500, "unknown format");
}

} // namespace

Response jemalloc_log_page(const Request& request) {
    auto log = parse_log(request);
    if (!log) {
        return text(400, log.error().message);
    }
    auto profiler = Profiler::find(request.jemalloc);
    if (!profiler || !profiler->require_active()) {
        return text(403, profiler ? profiler->require_active().error().message
                                  : profiler.error().message);
    }
    const Mallctl* mallctl = &profiler->mallctl();
    auto slot = LogSlot::claim();
    if (!slot) {
        return text(409, "an allocation log is already being taken in this process; ask "
                         "again when it is done");
    }
    auto directory = PrivateDirectory::make();
    if (!directory) {
        return text(500, directory.error().message);
    }
    std::string path = directory->file();
    if (auto logged = log_for(*mallctl, path, *log, request); !logged) {
        // EAGAIN: a log started otherwise (MALLOC_CONF=prof_log:true) is running.
        return text(409, logged.error().message);
    }
    if (request.stopping && request.stopping()) {
        return text(503, "cut short: the server is stopping or the client has gone");
    }
    auto json = read_input(path);
    if (!json) {
        return text(500, json.error().message);
    }
    auto parsed = parse_prof_log(json->bytes, "prof.log_stop's log");
    if (!parsed) {
        return text(500, parsed.error().message);
    }
    if (parsed->allocations.empty()) {
        return text(503, fmt::format("no allocation was logged in {} s: jemalloc logs a sampled "
                                     "allocation when it is freed while the log runs (one per "
                                     "{} bytes allocated); ask for more seconds, under load",
                                     log->seconds, parsed->sample_period()));
    }
    auto profile = own_log_profile(*parsed, log->build, log->names);
    if (!profile) {
        return text(500, profile.error().message);
    }
    return answer(*profile, *log);
}

} // namespace heapkit::runtime
