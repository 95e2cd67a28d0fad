// SPDX-License-Identifier: MIT
// libheapkit-agent.so, what LD_PRELOAD names: a small loader that needs nothing but the C
// library. It decides, in the constructor, whether this is the process the operator
// meant; everywhere else (a compiler varnishd runs, a shell or helper that inherited
// LD_PRELOAD) it does nothing at all: no thread, no line on stderr, no port, no library
// loaded. In the process meant it replaces jemalloc's backtrace at once where jemalloc
// unwinds with libgcc (guarded_backtrace.cpp), and after HEAPKIT_START_DELAY_MS it checks
// for jemalloc and heap profiling and only then loads the agent proper,
// libheapkit-agent-core.so beside it, with jemalloc's sampling off on its own thread: the
// constructors of the libraries that come with it (libstdc++'s locale, libdw, the HTTP
// server's) allocate in the host, and none of that may show in the host's heap profile.
//
// Which process is meant (HEAPKIT_PROGRAM, else the first of the tree that is not a
// wrapper such as timeout or sudo): lineage.hpp.
#include "guarded_backtrace.hpp"
#include "heapkit/runtime/jemalloc_copies.hpp"
#include "lazy_pages.hpp"
#include "lineage.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" __attribute__((visibility("default"))) const char heapkit_agent_version[] =
    HEAPKIT_VERSION;

namespace heapkit::agent {
namespace {

using Serve = void (*)(int parent_port, void* registry);

constexpr const char* core_name = "libheapkit-agent-core.so";

bool g_quiet = false;
// Whether this is the process meant could not be told (an ancestor another user's): then
// it serves if it can, and says nothing if it cannot.
bool g_uncertain = false;
bool g_follow_forks = false;
unsigned g_start_delay_ms = 1000;
Serve g_serve = nullptr; // the core's entry once it is loaded (then the core sees forks)
// One page shared by the tree this process starts (fork keeps a MAP_SHARED mapping): the
// serving processes write themselves into it (the core's process_registry).
void* g_registry = nullptr;
// jemalloc's samples are unwound by install_guarded_backtrace's hook.
bool g_guarded = false;

// One line on stderr, written whole with write(2): stderr's FILE may be the host's to
// lock or to replace.
void say(const char* what, const char* detail = "") {
    if (g_quiet) {
        return;
    }
    char line[512];
    int size = std::snprintf(line, sizeof(line), "heapkit-agent[%d]: %s%s\n",
                             static_cast<int>(getpid()), what, detail);
    if (size > 0) {
        static_cast<void>(::write(STDERR_FILENO, line,
                                  static_cast<size_t>(std::min(size, int(sizeof(line)) - 1))));
    }
}

bool flag(const char* name, bool fallback) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        return fallback;
    }
    return std::strcmp(value, "1") == 0 || std::strcmp(value, "true") == 0 ||
           std::strcmp(value, "yes") == 0 || std::strcmp(value, "on") == 0;
}

// The copies of jemalloc in this process (runtime/jemalloc_copies.hpp: static ones in the
// executable and prefixed ones too). A page and more: not on a thread's stack.
runtime::JemallocCopies g_copies;

// True when jemalloc's heap profiling is on in the copy `mallctl`.
bool profiles(Mallctl mallctl) {
    bool profiling = false;
    size_t size = sizeof(profiling);
    return mallctl("opt.prof", &profiling, &size, nullptr, 0) == 0 && profiling;
}

// The copy whose profile is served, or null.
Mallctl serving_mallctl() {
    return g_copies.serving >= 0 ? g_copies.copies[g_copies.serving].mallctl : nullptr;
}

// The copy the process's malloc is, where the agent's own allocations go, or null.
Mallctl own_mallctl() {
    const runtime::JemallocCopy* own = runtime::own_copy(g_copies);
    return own != nullptr ? own->mallctl : nullptr;
}

// True when LuaJIT is loaded in this process.
bool has_luajit() {
    return dl_iterate_phdr(
               [](dl_phdr_info* info, size_t, void*) {
                   return info->dlpi_name != nullptr &&
                                  std::strstr(info->dlpi_name, "libluajit") != nullptr
                              ? 1
                              : 0;
               },
               nullptr) != 0;
}

// Where the guarded backtrace could not be installed (a jemalloc without the hook),
// jemalloc built to unwind with libgcc aborts the process when a sampled allocation's
// stack passes through code LuaJIT compiled (guarded_backtrace.cpp says why), agent or
// not: the operator hears it once, with the way out.
void warn_of_luajit(Mallctl mallctl) {
    bool libgcc = false;
    size_t size = sizeof(libgcc);
    if (!g_guarded && has_luajit() &&
        mallctl("config.prof_libgcc", &libgcc, &size, nullptr, 0) == 0 && libgcc) {
        say("this process runs LuaJIT, and jemalloc's heap profiling unwinds with libgcc, "
            "which aborts the process when a sampled allocation's stack passes through "
            "JIT-compiled Lua code, and this jemalloc lets no other unwinder in; profile with "
            "LuaJIT's compiler off (kresd: jit.off() in its configuration)");
    }
}

// From the start, before the program's first sampled allocation can meet JIT code: the
// hook needs only jemalloc, and changes no stack that does not pass through such code.
// Every copy that is called is guarded; the one served decides g_guarded.
void guard_backtraces() {
    bool luajit = has_luajit();
    for (int i = 0; i < g_copies.count; ++i) {
        const runtime::JemallocCopy& copy = g_copies.copies[i];
        if (runtime::is_unused(copy) || !profiles(copy.mallctl)) {
            continue;
        }
        bool guarded = install_guarded_backtrace(copy.mallctl, luajit);
        g_guarded = i == g_copies.serving ? guarded : g_guarded;
    }
}

// The objects loaded before the core (a page and more: not on a thread's stack). At
// namespace scope: a function's static would need libstdc++'s guard, and the loader
// needs nothing but the C library.
LoadedObjects g_before;

// libheapkit-agent-core.so from the directory this library was loaded from.
void* load_core() {
    Dl_info self{};
    if (dladdr(static_cast<const void*>(heapkit_agent_version), &self) == 0 ||
        self.dli_fname == nullptr) {
        return nullptr;
    }
    char path[4096];
    const char* slash = std::strrchr(self.dli_fname, '/');
    int directory = slash != nullptr ? static_cast<int>(slash - self.dli_fname) : 1;
    const char* prefix = slash != nullptr ? self.dli_fname : ".";
    std::snprintf(path, sizeof(path), "%.*s/%s", directory, prefix, core_name);
    note_loaded_objects(g_before);
    void* core = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (core != nullptr) {
        release_new_objects_pages(g_before);
    }
    return core;
}

void* start(void* argument) {
    int parent_port = static_cast<int>(reinterpret_cast<intptr_t>(argument));
    pthread_setname_np(pthread_self(), "heapkit-agent");
    // Past the program's start (or its child's), where programs close what they did not
    // open. One that execs or exits by then is not served.
    timespec delay{static_cast<time_t>(g_start_delay_ms / 1000),
                   static_cast<long>(g_start_delay_ms % 1000) * 1'000'000L};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
    }
    runtime::find_jemalloc_copies(g_copies); // again: the program may have loaded more
    Mallctl mallctl = serving_mallctl();
    if (g_uncertain && (mallctl == nullptr || !profiles(mallctl))) {
        return nullptr; // perhaps not the program meant (a compiler a server runs): silent
    }
    if (mallctl == nullptr || g_copies.split_operators >= 0) {
        static char why[1024];
        runtime::describe_missing(g_copies, why, sizeof(why));
        say(why, ": not serving");
        return nullptr;
    }
    if (!profiles(mallctl)) {
        const runtime::JemallocCopy& copy = g_copies.copies[g_copies.serving];
        char variable[32];
        runtime::conf_variable(copy.prefix, variable, sizeof(variable));
        static char why[768];
        std::snprintf(why, sizeof(why),
                      "jemalloc's heap profiling is off in %s; start the program with "
                      "%s=prof:true: not serving",
                      copy.object, variable);
        say(why);
        return nullptr;
    }
    warn_of_luajit(mallctl);
    // What this thread allocates from here on (the core's libraries' constructors
    // included) is not sampled, so it is not in the host's heap profile; and it comes from
    // arena 0, so that the agent creates no arena of its own in the host
    // (Profiler::make_thread_a_guest, for the core's threads).
    if (Mallctl own = own_mallctl()) {
        bool inactive = false;
        unsigned first_arena = 0;
        static_cast<void>(own("thread.prof.active", nullptr, nullptr, &inactive, sizeof(inactive)));
        static_cast<void>(own("thread.arena", nullptr, nullptr, &first_arena, sizeof(first_arena)));
    }
    if (g_serve == nullptr) {
        void* core = load_core();
        void* entry = core != nullptr ? dlsym(core, "heapkit_agent_core_serve") : nullptr;
        if (entry == nullptr) {
            say("cannot load the agent: ", dlerror());
            return nullptr;
        }
        g_serve = reinterpret_cast<Serve>(entry);
    }
    g_serve(parent_port, g_registry);
    return nullptr;
}

// One detached thread with every signal blocked: the host's signals reach the host's
// threads. Made with jemalloc's sampling off in the calling thread (the host's, restored
// after): pthread_create allocates the new thread's TLS vector, and that stack, through
// the agent, would be in the host's heap profile.
void start_thread(int parent_port) {
    Mallctl mallctl = own_mallctl();
    bool was_active = false;
    size_t size = sizeof(was_active);
    bool off = false;
    bool toggled = mallctl != nullptr &&
                   mallctl("thread.prof.active", &was_active, &size, &off, sizeof(off)) == 0;
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, start,
                       reinterpret_cast<void*>(static_cast<intptr_t>(parent_port))) != 0) {
        say("cannot start a thread: not serving");
    }
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (toggled) {
        mallctl("thread.prof.active", nullptr, nullptr, &was_active, sizeof(was_active));
    }
}

// A child forked before the core was loaded has lost the thread that would load it;
// once the core is loaded, its own fork handlers decide what a child serves. The child's
// parent serves (or will) on the configured port: -2 says so to the core, which then
// takes the next free port after it.
void after_fork_in_child() {
    if (g_serve == nullptr && g_follow_forks) {
        start_thread(-2);
    }
}

__attribute__((constructor)) void load() {
    Meant meant = meant_process();
    if (meant == Meant::no) {
        return;
    }
    g_uncertain = meant == Meant::uncertain;
    g_quiet = flag("HEAPKIT_QUIET", false);
    g_follow_forks = flag("HEAPKIT_FOLLOW_FORKS", false);
    if (const char* delay = std::getenv("HEAPKIT_START_DELAY_MS"); delay != nullptr && *delay) {
        char* end = nullptr;
        unsigned long value = std::strtoul(delay, &end, 10);
        if (end != nullptr && *end == '\0' && value <= 600'000) {
            g_start_delay_ms = static_cast<unsigned>(value);
        } // else the core says what is wrong with it, once loaded
    }
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_registry = page == MAP_FAILED ? nullptr : page;
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    runtime::find_jemalloc_copies(g_copies);
    guard_backtraces();
    start_thread(-1);
}

} // namespace
} // namespace heapkit::agent

// libgcc's registration of unwind tables, seen on its way (a preloaded library comes
// first in symbol lookup): a JIT (LuaJIT, however it is loaded or linked) registers the
// tables of its code, and from then on libgcc's lookups take a lock that a sampled
// allocation inside them must not wait for (cfi_unwinder.hpp). The call is passed on to
// libgcc unchanged. Exported (agent.map) for this alone.
namespace {

using RegisterFrame = void (*)(void*);
using RegisterFrameInfo = void (*)(const void*, void*);

template <typename Function> Function next_definition(Function* cache, const char* name) {
    Function next = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (next == nullptr) {
        next = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
        __atomic_store_n(cache, next, __ATOMIC_RELEASE);
    }
    return next;
}

RegisterFrame g_register_frame = nullptr;
RegisterFrameInfo g_register_frame_info = nullptr;

} // namespace

extern "C" __attribute__((visibility("default"))) void __register_frame(void* begin) {
    heapkit::agent::note_registered_unwind_tables();
    if (RegisterFrame next = next_definition(&g_register_frame, "__register_frame")) {
        next(begin);
    }
}

extern "C" __attribute__((visibility("default"))) void __register_frame_info(const void* begin,
                                                                             void* object) {
    heapkit::agent::note_registered_unwind_tables();
    if (RegisterFrameInfo next = next_definition(&g_register_frame_info, "__register_frame_info")) {
        next(begin, object);
    }
}
