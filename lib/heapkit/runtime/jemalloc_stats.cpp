// SPDX-License-Identifier: MIT
#include "heapkit/runtime/jemalloc_stats.hpp"

namespace heapkit::runtime {
namespace {

using StatsPrint = StatsPrintFunction;

void append(void* out, const char* text) {
    static_cast<std::string*>(out)->append(text);
}

} // namespace

Result<std::string> print_jemalloc_stats(const Mallctl& mallctl) {
    StatsPrint print = mallctl.copy().stats_print;
    if (print == nullptr) {
        return fail("malloc_stats_print is not loaded beside {}", mallctl.symbol());
    }
    std::string out;
    out.reserve(1 << 15);
    // JSON without what the reconciliation does not read: per-arena ("a"), mutex ("x"),
    // large-class ("l"), extent ("e") and HPA ("h") tables. The full print is ~50 KB and,
    // with 9 arenas, tens of milliseconds of mallctl lookups: too slow for every scrape.
    print(append, &out, "Jaxleh");
    return out;
}

} // namespace heapkit::runtime
