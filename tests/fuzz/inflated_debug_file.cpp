// SPDX-License-Identifier: MIT
// Any bytes as a separate debug file whose DWARF may be compressed: the copy with its
// sections inflated (inflated_debug_file) must never crash, nor allocate what a section
// header merely claims. The input's own build id is asked for, so that inputs reach the
// sections rather than stop at the build id check.
#include "heapkit/symbolize/elf/inflated_debug_file.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // A memory file: inflated_debug_file reads a descriptor, and no disk write bounds the
    // rate.
    heapkit::UniqueFd file(::memfd_create("fuzz-debug-file", MFD_CLOEXEC));
    if (!file || ::write(file.get(), data, size) != static_cast<ssize_t>(size)) {
        std::abort();
    }
    elf_version(EV_CURRENT);
    std::vector<unsigned char> build_id;
    if (Elf* elf = elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(data)), size)) {
        const void* id = nullptr;
        ssize_t length = dwelf_elf_gnu_build_id(elf, &id);
        if (length > 0) {
            const auto* bytes = static_cast<const unsigned char*>(id);
            build_id.assign(bytes, bytes + length);
        }
        elf_end(elf);
    }
    std::string refused;
    heapkit::UniqueFd inflated = heapkit::inflated_debug_file(file.get(), build_id, &refused);
    if (inflated && !refused.empty()) {
        __builtin_trap(); // a refused file is not used
    }
    return 0;
}
