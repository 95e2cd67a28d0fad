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

#include "heapkit/util/read_only_segments.hpp"

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

int release_object(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' ||
        noted(*release.before, info->dlpi_addr) || has_text_relocations(*info)) {
        return 0;
    }
    for_each_read_only_run(*info, release.page, [&](uintptr_t from, uintptr_t to) {
        void* at = reinterpret_cast<void*>(from);
        if (madvise(at, to - from, MADV_RANDOM) == 0 &&
            madvise(at, to - from, MADV_DONTNEED) == 0) {
            release.released += to - from;
        }
    });
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
