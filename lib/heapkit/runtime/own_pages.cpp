// SPDX-License-Identifier: MIT
// Why: a conversion (reading the dump, looking frames up, writing pprof, compressing it)
// runs through a few MB of heapkit's code, and the kernel maps 64 kB around each page it
// faults in. Those clean pages stayed in the host's resident set for good after its first
// profile: about 1.2 MB, most of what a profile still cost once the files it named frames
// with were closed (export.cpp). Released after each request, they cost the next request a
// few hundred minor faults (well under a millisecond) and the host nothing between them.
#include "heapkit/runtime/own_pages.hpp"

#include "heapkit/symbolize/symbolize.hpp"

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

bool has_text_relocations(const dl_phdr_info& info) {
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info.dlpi_phdr[i];
        if (segment.p_type != PT_DYNAMIC) {
            continue;
        }
        const auto* entry = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + segment.p_vaddr);
        for (; entry->d_tag != DT_NULL; ++entry) {
            if (entry->d_tag == DT_TEXTREL ||
                (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL) != 0)) {
                return true;
            }
        }
    }
    return false;
}

// The whole pages of [start, end) outside [hole_start, hole_end), let go of.
void release_range(uintptr_t start, uintptr_t end, uintptr_t hole_start, uintptr_t hole_end,
                   Release& release) {
    auto piece = [&](uintptr_t from, uintptr_t to) {
        from = (from + release.page - 1) & ~(release.page - 1);
        to &= ~(release.page - 1);
        if (from < to && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) == 0) {
            release.released += to - from;
        }
    };
    if (hole_end <= start || hole_start >= end) {
        piece(start, end);
        return;
    }
    piece(start, std::min(end, hole_start));
    piece(std::max(start, hole_end), end);
}

int release_object(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    bool ours = std::find(release.bases.begin(), release.bases.end(), info->dlpi_addr) !=
                release.bases.end();
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' ||
        (!ours && !is_brought(info->dlpi_name)) || has_text_relocations(*info)) {
        return 0; // the main program (empty name) is never heapkit's
    }
    uintptr_t relro_start = 0;
    uintptr_t relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[i];
        if (segment.p_type == PT_GNU_RELRO) {
            relro_start = info->dlpi_addr + segment.p_vaddr;
            relro_end = relro_start + segment.p_memsz;
        }
    }
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[i];
        if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) {
            continue;
        }
        uintptr_t start = info->dlpi_addr + segment.p_vaddr;
        // p_filesz, not p_memsz: past the file's bytes a segment is anonymous.
        release_range(start, start + segment.p_filesz, relro_start, relro_end, release);
    }
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
