// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <elfutils/libdwfl.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace heapkit {

// One ELF file opened through libdwfl, reported at bias 0 so that libdwfl's addresses
// are the file's own ELF virtual addresses. Owns its Dwfl session.
class ElfModule {
public:
    // Opens `path`; an error names the path and says why.
    static Result<std::unique_ptr<ElfModule>> open(const std::string& path);

    ElfModule(const ElfModule&) = delete;
    ElfModule& operator=(const ElfModule&) = delete;

    // Lower-case hex NT_GNU_BUILD_ID, or empty.
    const std::string& build_id() const { return m_build_id; }

    // True when the file defines `mallctl`: it is jemalloc itself (linked or preloaded),
    // so code in it at the leaf end of a stack is allocator-internal even when unnamed.
    bool is_jemalloc() const { return m_is_jemalloc; }

    // ELF virtual address of a file offset, through the PT_LOAD segment holding it.
    std::optional<uint64_t> vaddr_of_file_offset(uint64_t file_offset) const;

    // The frames at ELF vaddr `vaddr`, innermost first, or empty when no symbol
    // contains it. Symbol sizes are honoured: an address past a symbol's end gets no name.
    std::vector<Frame> frames_at(uint64_t vaddr) const;

private:
    struct DwflDeleter {
        void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
    };
    struct Segment {
        uint64_t file_offset;
        uint64_t file_size;
        uint64_t vaddr;
    };
    ElfModule() = default;

    std::unique_ptr<Dwfl, DwflDeleter> m_dwfl;
    Dwfl_Module* m_module = nullptr; // borrowed from m_dwfl
    std::vector<Segment> m_segments;
    std::string m_build_id;
    bool m_is_jemalloc = false;
};

} // namespace heapkit
