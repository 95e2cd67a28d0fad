// SPDX-License-Identifier: MIT
// The pages of a loaded object that hold its file's read-only bytes: what can be let go of
// (MADV_DONTNEED) and found again in the page cache at the next touch. Both the runtime
// (its own libraries after a request) and the agent's loader (libraries dlopen'ed while
// starting) give them back. Header-only and without the C++ library: the loader links
// nothing but libc.
#pragma once

#include <cstdint>
#include <link.h>

namespace heapkit {

// True when the dynamic linker wrote into this object's read-only segments (text
// relocations): their pages are then private copies, which dropping would lose.
inline bool has_text_relocations(const dl_phdr_info& info) {
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

// Calls `each(name)` with each library `info`'s object names as needed (DT_NEEDED), as a
// NUL-terminated string. The dynamic linker relocates DT_STRTAB in place where the dynamic
// section is writable, and leaves it an offset where it is not (the vDSO's).
template <typename Each> void for_each_needed(const dl_phdr_info& info, Each&& each) {
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info.dlpi_phdr[i];
        if (segment.p_type != PT_DYNAMIC) {
            continue;
        }
        const auto* first = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + segment.p_vaddr);
        uintptr_t strings = 0;
        bool needs = false;
        for (const ElfW(Dyn)* entry = first; entry->d_tag != DT_NULL; ++entry) {
            strings = entry->d_tag == DT_STRTAB ? entry->d_un.d_ptr : strings;
            needs = needs || entry->d_tag == DT_NEEDED;
        }
        if (!needs || strings == 0) {
            return;
        }
        if (strings < info.dlpi_addr) {
            strings += info.dlpi_addr;
        }
        for (const ElfW(Dyn)* entry = first; entry->d_tag != DT_NULL; ++entry) {
            if (entry->d_tag == DT_NEEDED) {
                each(reinterpret_cast<const char*>(strings + entry->d_un.d_val));
            }
        }
    }
}

// Calls `release(from, to)` for each run of whole pages (of `page` bytes) of `info`'s
// read-only loaded segments, outside its RELRO region (written by the dynamic linker
// before it was made read-only: private too). Only the file's bytes (p_filesz): past them
// a segment is anonymous.
template <typename Release>
void for_each_read_only_run(const dl_phdr_info& info, uintptr_t page, Release&& release) {
    uintptr_t relro_start = 0;
    uintptr_t relro_end = 0;
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info.dlpi_phdr[i];
        if (segment.p_type == PT_GNU_RELRO) {
            relro_start = info.dlpi_addr + segment.p_vaddr;
            relro_end = relro_start + segment.p_memsz;
        }
    }
    auto whole_pages = [&](uintptr_t from, uintptr_t to) {
        from = (from + page - 1) & ~(page - 1);
        to &= ~(page - 1);
        if (from < to) {
            release(from, to);
        }
    };
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info.dlpi_phdr[i];
        if (segment.p_type != PT_LOAD || (segment.p_flags & PF_W) != 0) {
            continue;
        }
        uintptr_t start = info.dlpi_addr + segment.p_vaddr;
        uintptr_t end = start + segment.p_filesz;
        if (relro_end <= start || relro_start >= end) {
            whole_pages(start, end);
        } else {
            whole_pages(start, relro_start < end ? relro_start : end);
            whole_pages(relro_end > start ? relro_end : start, end);
        }
    }
}

} // namespace heapkit
