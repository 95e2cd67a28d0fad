// SPDX-License-Identifier: MIT
// Why: a conversion (reading the dump, looking frames up, writing pprof, compressing it)
// runs through a few MB of heapkit's code, and the kernel maps 64 kB around each page it
// faults in. Those clean pages stayed in the host's resident set for good after its first
// profile: about 1.2 MB, most of what a profile still cost once the files it named frames
// with were closed (export.cpp). Released after each request, they cost the next request a
// few hundred minor faults (well under a millisecond) and the host nothing between them.
#include "heapkit/runtime/own_pages.hpp"

#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/read_only_segments.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <link.h>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// Libraries only heapkit brings into a host, by the start of their file name.
constexpr std::array brought = {"libprotobuf-lite.so", "libfmt.so", "libre2.so", "libdeflate.so"};

struct Release {
    std::array<uintptr_t, 4> bases{}; // load addresses of the objects found by address
    uintptr_t page = 4096;
    size_t released = 0;
};

bool is_brought(const char* path) {
    const char* slash = std::strrchr(path, '/');
    std::string_view name = slash != nullptr ? slash + 1 : path;
    return std::any_of(brought.begin(), brought.end(),
                       [&](const char* prefix) { return name.starts_with(prefix); });
}

int release_object(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    bool ours = std::find(release.bases.begin(), release.bases.end(), info->dlpi_addr) !=
                release.bases.end();
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' ||
        (!ours && !is_brought(info->dlpi_name)) || has_text_relocations(*info)) {
        return 0; // the main program (empty name) is never heapkit's
    }
    for_each_read_only_run(*info, release.page, [&](uintptr_t from, uintptr_t to) {
        if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) == 0) {
            release.released += to - from;
        }
    });
    return 0;
}

// The load address of the object holding `address`, or 0.
uintptr_t base_of(const void* address) {
    Dl_info info{};
    return ::dladdr(address, &info) != 0 ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 0;
}

} // namespace

size_t release_own_code_pages() {
    Release release;
    release.bases = {base_of(reinterpret_cast<const void*>(&release_own_code_pages)),
                     base_of(reinterpret_cast<const void*>(&heapkit::symbolize)),
                     base_of(reinterpret_cast<const void*>(&dwfl_begin)),
                     base_of(reinterpret_cast<const void*>(&elf_begin))};
    long page = ::sysconf(_SC_PAGESIZE);
    release.page = page > 0 ? static_cast<uintptr_t>(page) : 4096;
    ::dl_iterate_phdr(release_object, &release);
    return release.released;
}

} // namespace heapkit::runtime
