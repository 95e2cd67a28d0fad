// SPDX-License-Identifier: MIT
// Why: a host pays resident memory for every page of the agent's libraries that is
// mapped in it. Loading them (relocations, constructors) and serving a first page touch a
// scattering of their code and read-only data, and the kernel maps 64 kB around each page
// faulted in (fault-around): in an idle redis most of what serving cost was clean pages
// of the core, libprotobuf-lite, libdw and libfmt that no request used. Their read-only
// segments are released right after loading and read one page at a time from then on.
// Writable segments, and the read-only-after-relocation (RELRO) range, hold private
// copies the dynamic linker wrote: those are never released, nor is anything of an object
// whose code the dynamic linker relocated in place (text relocations).
#include "lazy_pages.hpp"

#include <algorithm>
#include <cstdint>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace heapkit::agent {
namespace {

bool noted(const LoadedObjects& objects, unsigned long base) {
    return std::find(objects.bases, objects.bases + objects.count, base) !=
           objects.bases + objects.count;
}

struct Release {
    const LoadedObjects* before;
    uintptr_t page;
    unsigned long released;
};

// The page-aligned part of [start, end) that lies outside [hole_start, hole_end), released
// piece by piece.
void release_range(uintptr_t start, uintptr_t end, uintptr_t hole_start, uintptr_t hole_end,
                   Release& release) {
    auto release_piece = [&](uintptr_t from, uintptr_t to) {
        from = (from + release.page - 1) & ~(release.page - 1); // whole pages only
        to &= ~(release.page - 1);
        if (from < to) {
            void* at = reinterpret_cast<void*>(from);
            if (madvise(at, to - from, MADV_RANDOM) == 0 &&
                madvise(at, to - from, MADV_DONTNEED) == 0) {
                release.released += to - from;
            }
        }
    };
    if (hole_end <= start || hole_start >= end) {
        release_piece(start, end);
        return;
    }
    release_piece(start, std::min(end, hole_start));
    release_piece(std::max(start, hole_end), end);
}

// True when the dynamic linker wrote into this object's read-only segments.
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

int release_object(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' ||
        noted(*release.before, info->dlpi_addr) || has_text_relocations(*info)) {
        return 0;
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

} // namespace

void note_loaded_objects(LoadedObjects& objects) {
    objects.count = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* argument) {
            auto& into = *static_cast<LoadedObjects*>(argument);
            if (into.count == LoadedObjects::capacity) {
                return 1;
            }
            into.bases[into.count++] = info->dlpi_addr;
            return 0;
        },
        &objects);
}

unsigned long release_new_objects_pages(const LoadedObjects& before) {
    if (before.count == LoadedObjects::capacity) {
        return 0; // not every object was noted: one of the host's could look new
    }
    Release release{&before, static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), 0};
    dl_iterate_phdr(release_object, &release);
    return release.released;
}

} // namespace heapkit::agent
