// SPDX-License-Identifier: MIT
// Where each function of a file starts and ends, from its call-frame information: the
// FDEs of .eh_frame (else .debug_frame). A stripped file keeps them, since unwinding
// (C++ exceptions, backtraces) needs them: they give an unnamed address its function's
// identity, so that the return addresses of one function are one frame.
#pragma once

#include <gelf.h>
#include <optional>
#include <vector>

namespace heapkit {

class FunctionBounds {
public:
    // Reads `elf`'s (borrowed, used only here) call-frame sections. A damaged or missing
    // section leaves what could be read: nothing, at worst.
    explicit FunctionBounds(Elf* elf);

    // The ELF vaddr where the function holding ELF vaddr `vaddr` starts: the start of
    // the FDE whose range holds it. nullopt when no FDE covers the address.
    std::optional<uint64_t> start_of(uint64_t vaddr) const;

    size_t size() const { return m_ranges.size(); }

private:
    struct Range {
        uint64_t start; // ELF vaddr
        uint64_t end;   // exclusive
    };
    std::vector<Range> m_ranges; // by start
};

} // namespace heapkit
