// SPDX-License-Identifier: MIT
#include "heapkit/runtime/peaks/peak_watcher.hpp"

#include "heapkit/runtime/guest/threads.hpp"
#include "heapkit/runtime/guest/unsampled_scope.hpp"
#include "heapkit/runtime/jemalloc_stats.hpp"
#include "heapkit/runtime/notices.hpp"
#include "heapkit/runtime/peaks/peak_captures.hpp"
#include "heapkit/runtime/peaks/peak_sample.hpp"
#include "heapkit/runtime/peaks/peak_triggers.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/try.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {

namespace {

// Counters for /metrics, kept for the process's life (trivially destructible).
std::array<std::atomic<uint64_t>, 3> g_captures{}; // by Trigger
std::array<std::atomic<uint64_t>, 3> g_skipped{};  // disk, size, error
std::atomic<uint64_t> g_deleted{0};
std::atomic<uint64_t> g_samples{0};
std::atomic<bool> g_ever_started{false};
constexpr std::array<const char*, 3> skip_reasons = {"disk", "size", "error"};
enum Skip { skip_disk, skip_size, skip_error };

// The operator's signal: the handler only raises this (async-signal-safe); the watcher
// looks at it every interval.
std::atomic<bool> g_signal_pending{false};
void on_signal(int) {
    g_signal_pending.store(true, std::memory_order_relaxed);
}

int64_t now_ms(bool wall) {
    auto since = wall ? std::chrono::system_clock::now().time_since_epoch()
                      : std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::milliseconds>(since).count();
}

// The program's name as a prefix: the name it was started by (argv[0]'s last component;
// /proc/self/exe may be a link's target, as redis-server's is redis-check-rdb), other
// characters '_'.
std::string program_prefix() {
    std::string name = program_invocation_short_name;
    for (char& c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '+';
        c = ok ? c : '_';
    }
    name = name.substr(0, 64);
    return name.empty() ? "heapkit" : name;
}

bool allowed_signal(int signal) {
    return signal == SIGUSR1 || signal == SIGUSR2 || (signal >= SIGRTMIN && signal <= SIGRTMAX);
}

Result<void> probe_writable(const std::string& directory) {
    std::string probe = directory + "/.heapkit-probe.XXXXXX";
    int fd = ::mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) {
        return fail("{}: cannot write there: {}", directory, std::strerror(errno));
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return {};
}

} // namespace

struct PeakWatcher::State {
    PeakOptions options;
    Triggers triggers;
    CgroupFiles cgroup;
    std::optional<Mallctl> mallctl;
    std::optional<Profiler> profiler;
    pid_t pid = ::getpid(); // a fork()ed child has the State but not the thread
    std::thread thread;
    struct sigaction previous_action {};

    std::mutex mutex; // guards what follows
    std::condition_variable wake;
    std::condition_variable done;
    bool stopping = false;
    uint64_t demands_asked = 0;
    uint64_t demands_done = 0;
    Result<std::string> last_demand = fail("no capture yet");

    // The watcher thread's own.
    uint64_t seq = 0;
    uint64_t last_bytes = 1u << 20; // the last capture's size: the next one's estimate
    std::set<std::string> said;

    explicit State(PeakOptions o)
        : options(std::move(o))
        , triggers(TriggerOptions{options.watch_rss, options.growth_percent, options.floor_bytes,
                                  options.min_interval_ms, options.danger_percent / 100,
                                  options.danger_bytes, options.danger_psi}) {}

    void say_once(const std::string& key, const std::string& line) {
        if (said.insert(key).second) {
            options.say(line);
        }
    }
    Result<std::string> capture(Trigger trigger, const MemorySample& sample);
    void run();
};

namespace {
std::mutex g_current_mutex;
// The running watcher, for the page and control requests. Never destroyed. Made in
// static storage: an allocation while the library loads, on the host's thread, would stay
// in the host's heap profile.
alignas(std::shared_ptr<PeakWatcher::State>) unsigned char g_current_storage[sizeof(
    std::shared_ptr<PeakWatcher::State>)];
auto* g_current = new (g_current_storage) std::shared_ptr<PeakWatcher::State>();

// The running watcher of this process: none in a fork()ed child, where its thread is gone.
std::shared_ptr<PeakWatcher::State> current_watcher() {
    std::lock_guard current(g_current_mutex);
    auto state = *g_current;
    return state && state->pid == ::getpid() ? state : nullptr;
}
} // namespace

Result<std::string> PeakWatcher::State::capture(Trigger trigger, const MemorySample& sample) {
    const std::string& dir = options.directory;
    auto skip = [&](Skip reason, const std::string& line) -> Result<std::string> {
        ++g_skipped[reason];
        say_once(skip_reasons[reason], line + " (said once)");
        return fail("{}", line);
    };
    auto free = free_bytes(dir);
    if (free && *free < options.min_free_bytes + last_bytes) {
        return skip(skip_disk, fmt::format("peaks: {} has {} bytes free, a capture needs about {} "
                                           "beside the {} kept free: capture skipped",
                                           dir, *free, last_bytes, options.min_free_bytes));
    }
    if (!profiler) {
        return skip(skip_error, "peaks: no jemalloc in this process: capture skipped");
    }
    auto heap = profiler->dump();
    if (!heap) {
        return skip(skip_error, fmt::format("peaks: {}: capture skipped", heap.error().message));
    }
    CaptureFiles files;
    files.heap = std::move(*heap);
    if (auto stats = print_jemalloc_stats(*mallctl)) {
        files.stats_json = std::move(*stats);
    }
    if (auto smaps = read_input("/proc/self/smaps_rollup")) {
        files.smaps = std::move(smaps->bytes);
    }
    if (cgroup.version != CgroupFiles::Version::none) {
        if (auto stat = read_input(cgroup.directory + "/memory.stat")) {
            files.memory_stat = std::move(stat->bytes);
        }
    }
    uint64_t size =
        files.heap.size() + files.stats_json.size() + files.smaps.size() + files.memory_stat.size();
    last_bytes = size;
    if (size > options.max_bytes) {
        return skip(skip_size, fmt::format("peaks: a capture of {} bytes is over the directory's "
                                           "cap of {} bytes: capture skipped",
                                           size, options.max_bytes));
    }
    if (free && *free < options.min_free_bytes + size) {
        return skip(skip_disk, fmt::format("peaks: {} has {} bytes free, a capture needs {} "
                                           "beside the {} kept free: capture skipped",
                                           dir, *free, size, options.min_free_bytes));
    }
    std::string stem =
        capture_stem(options.prefix, static_cast<uint64_t>(::getpid()), seq++, trigger);
    auto written = write_capture(dir, stem, files, trigger, sample, now_ms(true));
    if (!written) {
        return skip(skip_error, fmt::format("peaks: {}: capture skipped", written.error().message));
    }
    ++g_captures[static_cast<size_t>(trigger)];
    g_deleted += apply_retention(dir, options.prefix,
                                 Retention{options.keep, options.max_bytes, options.watch_rss});
    return stem;
}

void PeakWatcher::State::run() {
    auto interval = std::chrono::milliseconds(options.interval_ms);
    std::unique_lock lock(mutex);
    while (!stopping) {
        wake.wait_for(lock, interval, [&] { return stopping || demands_asked > demands_done; });
        if (stopping) {
            break;
        }
        uint64_t asked = demands_asked;
        bool demand = asked > demands_done || g_signal_pending.exchange(false);
        lock.unlock();
        MemorySample sample = read_memory_sample(mallctl ? &*mallctl : nullptr, cgroup);
        ++g_samples;
        int64_t now = now_ms(false);
        if (auto trigger = triggers.decide(sample, now)) {
            static_cast<void>(capture(*trigger, sample));
            // Taken or skipped, the window starts: a failing capture is not retried at
            // every sample.
            triggers.captured(*trigger, sample, now);
        }
        Result<std::string> demanded = fail("no capture asked");
        if (demand) {
            demanded = capture(Trigger::demand, sample);
            if (demanded) {
                triggers.captured(Trigger::demand, sample, now);
            }
        }
        lock.lock();
        if (demand && asked > demands_done) {
            demands_done = asked;
            last_demand = std::move(demanded);
            done.notify_all();
        }
    }
}

Result<void> check_peak_options(const PeakOptions& o) {
    if (o.directory.empty()) {
        return fail("peaks: no directory given");
    }
    if (!o.prefix.empty()) {
        HEAPKIT_TRY(check_capture_prefix(o.prefix));
    }
    if (o.interval_ms < 10 || o.interval_ms > 60'000) {
        return fail("peaks: interval {} ms: expected 10 to 60000", o.interval_ms);
    }
    if (!(o.growth_percent > 0 && o.growth_percent <= 10'000)) {
        return fail("peaks: growth {}%: expected more than 0, at most 10000", o.growth_percent);
    }
    if (!(o.danger_percent >= 0 && o.danger_percent <= 100)) {
        return fail("peaks: danger {}% of the cgroup's limit: expected 0 (off) to 100",
                    o.danger_percent);
    }
    if (!(o.danger_psi >= 0 && o.danger_psi <= 100)) {
        return fail("peaks: pressure {}: expected 0 (off) to 100", o.danger_psi);
    }
    if (o.min_interval_ms > 86'400'000) {
        return fail("peaks: {} ms between peak captures: expected at most a day",
                    o.min_interval_ms);
    }
    if (o.keep < 1 || o.keep > 10'000) {
        return fail("peaks: keep {}: expected 1 to 10000 captures", o.keep);
    }
    if (o.max_bytes < (64u << 10)) {
        return fail("peaks: a cap of {} bytes: expected at least 64 KiB", o.max_bytes);
    }
    if (o.signal != 0 && !allowed_signal(o.signal)) {
        return fail("peaks: signal {}: expected SIGUSR1, SIGUSR2 or a real-time signal (never "
                    "SIGPROF nor one with a meaning of its own)",
                    o.signal);
    }
    return {};
}

Result<std::unique_ptr<PeakWatcher>> PeakWatcher::start(PeakOptions options) {
    // Called on a thread of the host's, as Server::start is: what the watcher keeps (its
    // state, thread, notices) is a guest's, not in the host's profile.
    UnsampledScope unsampled;
    HEAPKIT_TRY(check_peak_options(options));
    if (options.prefix.empty()) {
        options.prefix = program_prefix();
    }
    if (!options.say) {
        options.say = [](const std::string& line) { notice_once(line, line); };
    }
    // The service user's alone: in a directory others may write to (/tmp), they could
    // plant files beside the captures or fill it to stop them.
    if (auto made = make_sole_directory(options.directory); !made) {
        return fail("peaks: {}", made.error().message);
    }
    HEAPKIT_TRY(probe_writable(options.directory));
    static_cast<void>(remove_stale_temporaries(options.directory, options.prefix));
    std::lock_guard current(g_current_mutex);
    if (*g_current) {
        return fail("peaks: a watcher runs already in this process");
    }
    auto state = std::make_shared<State>(std::move(options));
    state->cgroup = find_memory_cgroup();
    if (auto mallctl = Mallctl::find()) {
        state->mallctl = *mallctl;
    }
    if (auto profiler = Profiler::find()) {
        state->profiler = *profiler;
    }
    if (int signal = state->options.signal; signal != 0) {
        struct sigaction now {};
        ::sigaction(signal, nullptr, &now);
        if (now.sa_handler != SIG_DFL || (now.sa_flags & SA_SIGINFO) != 0) {
            return fail("peaks: signal {} ({}) has a handler of the program's own: not taken",
                        signal, strsignal(signal));
        }
        struct sigaction action {};
        action.sa_handler = on_signal;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        ::sigaction(signal, &action, &state->previous_action);
    }
    try {
        state->thread = start_guest_thread("heapkit-peaks", [raw = state.get()] { raw->run(); });
    } catch (const std::system_error& error) {
        return fail("peaks: cannot start a thread: {}", error.what());
    }
    *g_current = state;
    g_ever_started = true;
    return std::unique_ptr<PeakWatcher>(new PeakWatcher(std::move(state)));
}

PeakWatcher::PeakWatcher(std::shared_ptr<State> state)
    : m_state(std::move(state)) {}

PeakWatcher::~PeakWatcher() {
    {
        std::lock_guard current(g_current_mutex);
        g_current->reset();
    }
    {
        std::lock_guard lock(m_state->mutex);
        m_state->stopping = true;
        m_state->wake.notify_all();
        m_state->done.notify_all();
    }
    if (m_state->thread.joinable()) {
        m_state->thread.join();
    }
    if (m_state->options.signal != 0) {
        ::sigaction(m_state->options.signal, &m_state->previous_action, nullptr);
    }
}

Result<std::string> request_peak_capture(unsigned timeout_ms) {
    auto state = current_watcher();
    if (!state) {
        return fail("no peak watcher runs in this process (the agent: HEAPKIT_PEAKS_DIR)");
    }
    std::unique_lock lock(state->mutex);
    uint64_t ticket = ++state->demands_asked;
    state->wake.notify_all();
    bool done = state->done.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
        return state->stopping || state->demands_done >= ticket;
    });
    if (!done || state->demands_done < ticket) {
        return fail("the capture was not taken within {} ms", timeout_ms);
    }
    return state->last_demand;
}

std::pair<std::string, std::string> peaks_location() {
    auto state = current_watcher();
    if (!state) {
        return {};
    }
    return {state->options.directory, state->options.prefix};
}

std::string peaks_metrics() {
    if (!g_ever_started) {
        return "";
    }
    std::string out =
        "# HELP heapkit_peaks_captures_total Heap captures the peak watcher wrote, by trigger.\n"
        "# TYPE heapkit_peaks_captures_total counter\n";
    for (Trigger trigger : {Trigger::peak, Trigger::danger, Trigger::demand}) {
        fmt::format_to(std::back_inserter(out),
                       "heapkit_peaks_captures_total{{trigger=\"{}\"}} {}\n", trigger_name(trigger),
                       g_captures[static_cast<size_t>(trigger)].load());
    }
    out += "# HELP heapkit_peaks_skipped_total Captures not written: disk short, over the cap, "
           "an error.\n# TYPE heapkit_peaks_skipped_total counter\n";
    for (size_t i = 0; i < skip_reasons.size(); ++i) {
        fmt::format_to(std::back_inserter(out), "heapkit_peaks_skipped_total{{reason=\"{}\"}} {}\n",
                       skip_reasons[i], g_skipped[i].load());
    }
    fmt::format_to(std::back_inserter(out),
                   "# HELP heapkit_peaks_deleted_total Captures deleted to keep the budget.\n"
                   "# TYPE heapkit_peaks_deleted_total counter\nheapkit_peaks_deleted_total {}\n"
                   "# HELP heapkit_peaks_samples_total Looks the peak watcher took.\n"
                   "# TYPE heapkit_peaks_samples_total counter\nheapkit_peaks_samples_total {}\n",
                   g_deleted.load(), g_samples.load());
    return out;
}

} // namespace heapkit::runtime
