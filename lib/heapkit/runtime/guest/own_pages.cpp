// SPDX-License-Identifier: MIT
// Why: a conversion (reading the dump, looking frames up, writing pprof, compressing it)
// runs through a few MB of heapkit's code, and the kernel maps 64 kB around each page it
// faults in. Those clean pages stayed in the host's resident set for good after its first
// profile: about 1.2 MB, most of what a profile still cost once the files it named frames
// with were closed (export.cpp). Released after each request, they cost the next request a
// few hundred minor faults (well under a millisecond) and the host nothing between them.
#include "heapkit/runtime/guest/own_pages.hpp"

#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/read_only_segments.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <link.h>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// Libraries heapkit brings into a host, by the start of their file name; libdw's and
// libelf's names are found by address (release_own_code_pages). A host may use any of them
// itself: then their pages are the host's too, and are left alone.
constexpr size_t named = 4;
constexpr std::array<const char*, named> brought = {"libprotobuf-lite.so", "libfmt.so", "libre2.so",
                                                    "libdeflate.so"};

struct Release {
    std::array<uintptr_t, 2> own{};                   // heapkit's own objects, by load address
    std::array<std::string_view, named + 2> shared{}; // names of what a host may use too
    std::array<bool, named + 2> host_needs{};
    uintptr_t page = 4096;
    size_t released = 0;

    // Which of `shared` the file `path` is (or a library `path` names as needed): its index,
    // or shared.size().
    size_t shared_index(std::string_view path) const {
        std::string_view name = path.substr(path.rfind('/') + 1);
        for (size_t i = 0; i < shared.size(); ++i) {
            if (!shared[i].empty() && name.starts_with(shared[i])) {
                return i;
            }
        }
        return shared.size();
    }
    bool is_own(const dl_phdr_info& info) const {
        return std::find(own.begin(), own.end(), info.dlpi_addr) != own.end();
    }
};

// Which shared libraries the host needs: its own objects' needs, and those of the shared
// libraries it needs (libdw's libelf), found over repeated passes.
int note_host_needs(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    size_t shared = release.shared_index(info->dlpi_name != nullptr ? info->dlpi_name : "");
    if (release.is_own(*info) || (shared < release.shared.size() && !release.host_needs[shared])) {
        return 0;
    }
    for_each_needed(*info, [&](const char* needed) {
        if (size_t i = release.shared_index(needed); i < release.shared.size()) {
            release.host_needs[i] = true;
        }
    });
    return 0;
}

int release_object(dl_phdr_info* info, size_t, void* argument) {
    auto& release = *static_cast<Release*>(argument);
    if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0' || has_text_relocations(*info)) {
        return 0; // the main program (empty name) is never heapkit's
    }
    size_t shared = release.shared_index(info->dlpi_name);
    if (!release.is_own(*info) && (shared == release.shared.size() || release.host_needs[shared])) {
        return 0;
    }
    for_each_read_only_run(*info, release.page, [&](uintptr_t from, uintptr_t to) {
        if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED) == 0) {
            release.released += to - from;
        }
    });
    return 0;
}

// The load address of the object holding `address`, or 0; its file's name in `name`.
uintptr_t base_of(const void* address, std::string_view* name = nullptr) {
    Dl_info info{};
    if (::dladdr(address, &info) == 0) {
        return 0;
    }
    if (name != nullptr && info.dli_fname != nullptr) {
        std::string_view path = info.dli_fname;
        *name = path.substr(path.rfind('/') + 1);
    }
    return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

} // namespace

size_t release_own_code_pages() {
    Release release;
    release.own = {base_of(reinterpret_cast<const void*>(&release_own_code_pages)),
                   base_of(reinterpret_cast<const void*>(&heapkit::symbolize))};
    std::copy(brought.begin(), brought.end(), release.shared.begin());
    base_of(reinterpret_cast<const void*>(&dwfl_begin), &release.shared[named]);
    base_of(reinterpret_cast<const void*>(&elf_begin), &release.shared[named + 1]);
    long page = ::sysconf(_SC_PAGESIZE);
    release.page = page > 0 ? static_cast<uintptr_t>(page) : 4096;
    for (size_t pass = 0; pass <= release.shared.size(); ++pass) {
        auto before = release.host_needs;
        ::dl_iterate_phdr(note_host_needs, &release);
        if (release.host_needs == before) {
            break;
        }
    }
    ::dl_iterate_phdr(release_object, &release);
    return release.released;
}

} // namespace heapkit::runtime
