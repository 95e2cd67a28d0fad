// SPDX-License-Identifier: MIT
#include "heapkit/runtime/mallctl.hpp"

#include <cstring>
#include <dlfcn.h>

namespace heapkit::runtime {

Result<Mallctl> Mallctl::find() {
    for (const char* symbol : {"mallctl", "je_mallctl", "_rjem_mallctl"}) {
        if (void* address = ::dlsym(RTLD_DEFAULT, symbol)) {
            return Mallctl(reinterpret_cast<Function>(address), symbol);
        }
    }
    return fail("jemalloc is not loaded in this process (no mallctl, je_mallctl or "
                "_rjem_mallctl): link it or start the program with "
                "LD_PRELOAD=libjemalloc.so.2");
}

Result<void> Mallctl::call(const char* name, void* old_value, size_t* old_size, void* new_value,
                           size_t new_size) const {
    int error = m_function(name, old_value, old_size, new_value, new_size);
    if (error != 0) {
        return fail("{}(\"{}\"): {}", m_symbol, name,
                    error == ENOENT ? "not known to this jemalloc (built without profiling "
                                      "or statistics?)"
                                    : std::strerror(error));
    }
    return {};
}

} // namespace heapkit::runtime
