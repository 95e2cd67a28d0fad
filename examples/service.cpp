// SPDX-License-Identifier: MIT
// A C++ service that links jemalloc and libheapkit-runtime and serves its own heap
// profiles. Arguments: [PORT (0: any)] [ADDRESS (127.0.0.1)]. A bearer token, if any, comes
// from the file named by $HEAPKIT_TOKEN_FILE or from $HEAPKIT_TOKEN, never from the command
// line (which /proc/PID/cmdline, ps and /pprof/cmdline show). Run it, then:
//   jeprof --raw http://127.0.0.1:PORT/pprof/heap > heap.prof && heapfold heap.prof
//   curl -s http://127.0.0.1:PORT/debug/pprof/heap | go tool pprof -top /dev/stdin
//   HEAPKIT_EXAMPLE_BURN=2 example_service 8080 &
//   go tool pprof -top 'http://127.0.0.1:8080/debug/pprof/profile?seconds=5'
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/runtime/server.hpp"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// jemalloc reads this at start-up: profiling on, every allocation sampled (a demo; real
// services use lg_prof_sample:19 or so), freed memory counted for alloc_* values.
extern "C" {
const char* malloc_conf = "prof:true,prof_active:true,lg_prof_sample:0,prof_accum:true";
}

namespace {

std::vector<std::string>* cache;
std::map<int, std::vector<char>>* sessions;

// Kept: 256 x 4096 bytes.
__attribute__((noinline)) void fill_cache() {
    cache = new std::vector<std::string>;
    for (int i = 0; i < 256; ++i) {
        cache->emplace_back(4096, 'c');
    }
}

// Kept: 64 x 16384 bytes.
__attribute__((noinline)) void open_sessions() {
    sessions = new std::map<int, std::vector<char>>;
    for (int i = 0; i < 64; ++i) {
        (*sessions)[i] = std::vector<char>(16384, 's');
    }
}

// The bearer token: the first line of $HEAPKIT_TOKEN_FILE, else $HEAPKIT_TOKEN, else none;
// false when the file cannot be read.
bool read_token(std::string& token) {
    if (const char* file = std::getenv("HEAPKIT_TOKEN_FILE"); file != nullptr && *file != 0) {
        std::ifstream in(file);
        if (!in || !std::getline(in, token)) {
            std::fprintf(stderr, "example_service: cannot read the token from %s\n", file);
            return false;
        }
        return true;
    }
    if (const char* value = std::getenv("HEAPKIT_TOKEN"); value != nullptr) {
        token = value;
    }
    return true;
}

// CPU work with a name to find in CPU profiles: HEAPKIT_EXAMPLE_BURN=N threads run it.
__attribute__((noinline)) void burn_cpu_hot_loop() {
    volatile uint64_t sink = 0;
    for (uint64_t i = 1;; ++i) {
        sink = sink * 6364136223846793005ULL + i; // volatile: the loop is not folded away
    }
}

// Memory allocated while the service runs (HEAPKIT_EXAMPLE_GROW=1): 16 KiB every 20 ms,
// up to 32 MiB, for heap deltas to find.
__attribute__((noinline)) void grow_slowly() {
    auto* kept = new std::vector<std::vector<char>>;
    for (int i = 0; i < 2048; ++i) {
        kept->emplace_back(16384, 'g');
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Churn for the allocation log (HEAPKIT_EXAMPLE_CHURN=1, /debug/jemalloc/log): a producer
// that every millisecond makes a 256-byte scratch buffer it frees at once, and a 512-byte
// message it hands to a consumer thread, which frees it. Bounded: 10 minutes at most.
struct Scratch {
    char bytes[256];
};
struct Message {
    char bytes[512];
};

__attribute__((noinline)) Scratch* make_scratch() {
    return new Scratch{};
}

__attribute__((noinline)) Message* make_message() {
    return new Message{};
}

void churn() {
    static std::mutex lock;
    static std::condition_variable ready;
    static std::deque<Message*> queue;
    std::thread([] {
        // jemalloc logs the frees of a thread only once it has allocated (its profiling
        // data is made then): one allocation, kept.
        static auto* consumer_name = new std::string("churn consumer, freeing messages");
        static_cast<void>(consumer_name);
        for (;;) {
            std::unique_lock<std::mutex> held(lock);
            ready.wait(held, [] { return !queue.empty(); });
            Message* message = queue.front();
            queue.pop_front();
            held.unlock();
            delete message; // freed by another thread than the one that allocated it
        }
    }).detach();
    for (int i = 0; i < 600000; ++i) {
        Scratch* scratch = make_scratch();
        delete scratch;
        Message* message = make_message();
        {
            std::lock_guard<std::mutex> held(lock);
            queue.push_back(message);
        }
        ready.notify_one();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Started after the stop signals are blocked: the threads inherit the mask.
void start_background_work() {
    const char* burn = std::getenv("HEAPKIT_EXAMPLE_BURN");
    for (int i = 0; burn != nullptr && i < std::atoi(burn); ++i) {
        std::thread(burn_cpu_hot_loop).detach();
    }
    const char* grow = std::getenv("HEAPKIT_EXAMPLE_GROW");
    if (grow != nullptr && std::string(grow) == "1") {
        std::thread(grow_slowly).detach();
    }
    const char* churning = std::getenv("HEAPKIT_EXAMPLE_CHURN");
    if (churning != nullptr && std::string(churning) == "1") {
        std::thread(churn).detach();
    }
}

} // namespace

int main(int argc, char** argv) {
    heapkit::runtime::ServerOptions options;
    options.port = argc > 1 ? std::atoi(argv[1]) : 0;
    if (argc > 2) {
        options.address = argv[2];
    }
    if (argc > 3) {
        std::fprintf(stderr, "example_service: the token is taken from $HEAPKIT_TOKEN_FILE or "
                             "$HEAPKIT_TOKEN, not from the command line\n");
        return 1;
    }
    if (!read_token(options.bearer_token)) {
        return 1;
    }
    // This demo lets its clients switch profiling and its rate (POST /pprof/conf); the
    // library's default is off. HEAPKIT_EXAMPLE_CONTROL=0 keeps it off.
    const char* control = std::getenv("HEAPKIT_EXAMPLE_CONTROL");
    options.handler.allow_control = control == nullptr || std::string(control) != "0";
    // Block the signals before the server's threads start, so that sigwait gets them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    // Name this thread in the profiles (heapfold --threads, pprof's "thread" label).
    if (auto profiler = heapkit::runtime::Profiler::find()) {
        static_cast<void>(profiler->set_thread_name("main service thread"));
    }
    fill_cache();
    open_sessions();
    start_background_work();
    auto server = heapkit::runtime::Server::start(options);
    if (!server) {
        std::fprintf(stderr, "example_service: %s\n", server.error().message.c_str());
        return 1;
    }
    std::printf("listening on http://%s:%d\n", options.address.c_str(), (*server)->port());
    std::fflush(stdout);
    int received = 0;
    sigwait(&stop_signals, &received);
    return 0;
}
