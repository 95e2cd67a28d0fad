// SPDX-License-Identifier: MIT
// The fragmentation sampler (fragmentation_sampler.hpp): which way allocations reach it,
// chosen once when it starts, and what it holds for a page. The table and its hot path
// are sample_table.hpp's. Two ways:
//   interposers  libheapkit-fragmentation.so, preloaded beside the agent, defines malloc,
//                free and the rest of the family jemalloc exports and passes each call on
//                to jemalloc's own: jemalloc's fast paths stay. Taken when it is loaded,
//                its malloc is the one the program calls, and the one it forwards to is
//                the served copy's.
//   hooks        jemalloc's experimental.hooks.install, everywhere else (the runtime
//                linked into a program; jemalloc static in the executable or prefixed):
//                installing any hook sends every thread down jemalloc's slow paths.
// The profile's comments say which one kept the sample (BENCHMARKS.md: what each costs).
#include "heapkit/runtime/fragmentation_sampler.hpp"

#include "heapkit/runtime/notices.hpp"
#include "heapkit/runtime/sample_table.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <mutex>
#include <string_view>
#include <sys/mman.h>

namespace heapkit::runtime {
namespace {

using sampling::SamplerState;
using sampling::Tables;

// jemalloc 5.3's hooks_t (include/jemalloc/internal/hook.h), the ABI of
// experimental.hooks.install; `type` is its hook_alloc_t (an int).
using AllocHook = void (*)(void*, int, void*, uintptr_t, uintptr_t*);
using DallocHook = void (*)(void*, int, void*, uintptr_t*);
using ExpandHook = void (*)(void*, int, void*, size_t, size_t, uintptr_t, uintptr_t*);
struct Hooks {
    AllocHook alloc;
    DallocHook dalloc;
    ExpandHook expand;
    void* extra;
};

// The hooks' sampler; the interposers have their own.
SamplerState g_hooked;
// The sampler started (the hooks' or the interposers'), set once; null while off.
SamplerState* g_state = nullptr;
const void* g_keeper = nullptr; // a code address in the object that keeps the samples
std::string g_way;              // how the samples are kept, for the profile's comments

// The bytes asked for, from each allocating call's arguments (jemalloc.c, arena.c).
uint64_t requested_size(int type, const uintptr_t* args) {
    switch (type) {
    case 1: // posix_memalign(memptr, alignment, size)
        return args[2];
    case 2: // aligned_alloc(alignment, size)
    case 4: // memalign(alignment, size)
    case 7: // realloc(ptr, size)
    case 8: // rallocx(ptr, size, flags)
        return args[1];
    case 3: // calloc(num, size)
        return args[0] * args[1];
    default: // malloc, valloc, mallocx
        return args[0];
    }
}

void on_alloc(void*, int type, void* result, uintptr_t, uintptr_t* args) {
    sampling::note_allocation(g_hooked, result, requested_size(type, args));
}

void on_dalloc(void*, int, void* pointer, uintptr_t*) {
    sampling::note_free(g_hooked, pointer);
}

// The object that holds `code`, or null.
const void* object_base(const void* code) {
    Dl_info info{};
    return code != nullptr && dladdr(code, &info) != 0 ? info.dli_fbase : nullptr;
}

// libheapkit-fragmentation.so's sampler when its interposers can serve the copy
// `mallctl`: null and why not, else the sampler.
SamplerState* interposers_for(const Mallctl& mallctl, std::string& why_not) {
    auto entry = reinterpret_cast<sampling::InterposerEntry>(
        dlsym(RTLD_DEFAULT, sampling::interposer_entry));
    if (entry == nullptr) {
        why_not = "libheapkit-fragmentation.so is not preloaded";
        return nullptr;
    }
    const sampling::InterposerInfo* info = entry(sampling::sampler_abi);
    if (info == nullptr) {
        why_not = "the preloaded libheapkit-fragmentation.so is another version's";
        return nullptr;
    }
    const void* self = object_base(info->code);
    if (object_base(dlsym(RTLD_DEFAULT, "malloc")) != self) {
        why_not = "the program's malloc is not libheapkit-fragmentation.so's (the executable "
                  "defines its own)";
        return nullptr;
    }
    if (object_base(info->next_malloc) !=
        object_base(reinterpret_cast<const void*>(mallctl.copy().mallctl))) {
        why_not = fmt::format("the malloc libheapkit-fragmentation.so passes calls on to is "
                              "not {}'s",
                              mallctl.copy().object);
        return nullptr;
    }
    g_keeper = info->code;
    return info->state;
}

Result<Tables*> map_tables() {
    void* mapped = mmap(nullptr, sizeof(Tables), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) {
        return fail("cannot map {} bytes for the fragmentation sample: {}", sizeof(Tables),
                    std::strerror(errno));
    }
    return static_cast<Tables*>(mapped); // zero pages: every slot empty
}

Result<void> install_hooks(const Mallctl& mallctl) {
    Hooks hooks{on_alloc, on_dalloc, nullptr, nullptr};
    void* handle = nullptr;
    size_t size = sizeof(handle);
    int error =
        mallctl.copy().mallctl("experimental.hooks.install", &handle, &size, &hooks, sizeof(hooks));
    if (error != 0) {
        return fail("{}: experimental.hooks.install failed ({}): no fragmentation profile",
                    mallctl.copy().object,
                    error == EAGAIN ? "its four hooks are taken" : std::strerror(error));
    }
    return {};
}

Result<void> install(const Mallctl& mallctl, unsigned lg_sample) {
    auto backtrace = mallctl.read<sampling::Backtrace>("experimental.hooks.prof_backtrace");
    if (!backtrace || *backtrace == nullptr) {
        return fail("{} has no experimental.hooks.prof_backtrace (a jemalloc 5.3 built with "
                    "--enable-prof is needed to unwind the sampled allocations)",
                    mallctl.copy().object);
    }
    std::string why_not;
    SamplerState* interposed = interposers_for(mallctl, why_not);
    SamplerState& state = interposed != nullptr ? *interposed : g_hooked;
    auto tables = map_tables();
    if (!tables) {
        return tl::unexpected(tables.error());
    }
    state.mean_bytes = std::ldexp(1.0, static_cast<int>(lg_sample));
    state.backtrace = *backtrace;
    state.mallctl = mallctl.copy().mallctl;
    state.prof = mallctl.read<bool>("opt.prof").value_or(false);
    if (interposed == nullptr) {
        g_keeper = reinterpret_cast<const void*>(&on_alloc);
        g_way = fmt::format("kept through jemalloc's allocation hooks (experimental.hooks.install: "
                            "every allocation takes jemalloc's slow path; {})",
                            why_not);
        state.tables.store(*tables, std::memory_order_release);
        if (auto installed = install_hooks(mallctl); !installed) {
            return installed; // the tables stay mapped: never fed, never read
        }
    } else {
        g_way = "kept by libheapkit-fragmentation.so's malloc interposers (jemalloc's fast "
                "paths kept)";
        state.tables.store(*tables, std::memory_order_release);
    }
    g_state = &state;
    return {};
}

} // namespace

Result<std::optional<unsigned>> parse_fragmentation_setting(const char* value) {
    std::string_view text = value == nullptr ? "" : value;
    if (text.empty() || text == "0" || text == "off" || text == "no" || text == "false") {
        return std::nullopt;
    }
    if (text == "1" || text == "on" || text == "yes" || text == "true") {
        return 19u;
    }
    constexpr std::string_view prefix = "lg_sample:";
    unsigned lg = 0;
    if (text.starts_with(prefix) && text.size() > prefix.size() &&
        text.size() <= prefix.size() + 2) {
        bool digits = true;
        for (char c : text.substr(prefix.size())) {
            digits = digits && c >= '0' && c <= '9';
            lg = lg * 10 + static_cast<unsigned>(c - '0');
        }
        if (digits && lg <= 30) {
            return lg;
        }
    }
    return fail("HEAPKIT_FRAGMENTATION={}: expected 1 (one sample per 512 KiB allocated on "
                "average), lg_sample:N (per 2^N bytes, N from 0 to 30) or 0",
                text);
}

Result<void> start_fragmentation_sampling(const Mallctl& mallctl, unsigned lg_sample) {
    static std::mutex mutex;
    static std::optional<Result<void>> first;
    std::lock_guard lock(mutex);
    if (!first) {
        first = install(mallctl, lg_sample);
    }
    return *first;
}

void start_fragmentation_from_environment() {
    auto lg_sample = parse_fragmentation_setting(std::getenv("HEAPKIT_FRAGMENTATION"));
    if (!lg_sample) {
        notice_once("fragmentation", lg_sample.error().message + ": no fragmentation profile");
        return;
    }
    if (!*lg_sample) {
        return;
    }
    auto mallctl = Mallctl::find();
    auto started = mallctl ? start_fragmentation_sampling(*mallctl, **lg_sample)
                           : Result<void>(tl::unexpected(mallctl.error()));
    notice_once("fragmentation",
                started ? fmt::format("fragmentation sampling on: one allocation per {} bytes "
                                      "on average (/debug/pprof/fragmentation), {}",
                                      uint64_t{1} << **lg_sample, g_way)
                        : started.error().message);
}

bool fragmentation_sampling() {
    return g_state != nullptr;
}

Result<FragmentationSample> fragmentation_sample() {
    if (g_state == nullptr) {
        return fail("the fragmentation profile is off: start the program with "
                    "HEAPKIT_FRAGMENTATION=1");
    }
    const Tables& tables = *g_state->tables.load(std::memory_order_acquire);
    FragmentationSample sample;
    sample.mean_bytes = static_cast<uint64_t>(g_state->mean_bytes);
    sample.dropped = g_state->dropped.load(std::memory_order_relaxed);
    sample.way = g_way;
    sample.keeper = reinterpret_cast<uintptr_t>(g_keeper);
    for (size_t slot = 0; slot < sampling::slot_count; ++slot) {
        auto& way = tables.buckets[slot / sampling::ways].addresses[slot % sampling::ways];
        uintptr_t address = way.load(std::memory_order_acquire);
        if (address <= sampling::claimed) {
            continue;
        }
        uint64_t size = tables.sizes[slot].load(std::memory_order_relaxed);
        uint32_t index = tables.stacks_of[slot].load(std::memory_order_relaxed);
        if (way.load(std::memory_order_acquire) != address || index >= sampling::stack_count) {
            continue; // freed (and perhaps taken again) meanwhile
        }
        const sampling::Stack& stack = tables.stacks[index];
        SampledObject object;
        object.address = address;
        object.size = size;
        object.frames.assign(stack.frames, stack.frames + stack.depth);
        sample.objects.push_back(std::move(object));
    }
    return sample;
}

} // namespace heapkit::runtime
