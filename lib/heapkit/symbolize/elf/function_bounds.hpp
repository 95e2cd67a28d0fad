// SPDX-License-Identifier: MIT
// Where each function of a file starts and ends, from its call-frame information: the
// FDEs of .eh_frame (else .debug_frame). A stripped file keeps them, since unwinding
// (C++ exceptions, backtraces) needs them: they give an unnamed address its function's
// identity, so that the return addresses of one function are one frame.
//
// Where the linker wrote .eh_frame_hdr (PT_GNU_EH_FRAME) with its search table, that
// table is already sorted by function start: a lookup is a binary search in it and a
// read of the one FDE it points at, with no pass over the other FDEs. Reading and
// sorting every FDE of a big stripped library (ClickHouse's 82 MB) had been half of a
// warm run. Without a usable table, or at anything in it that does not agree with
// .eh_frame, every FDE is read as before: the answers are the same either way.
#pragma once

#include <cstdint>
#include <gelf.h>
#include <optional>
#include <vector>

namespace heapkit {

class FunctionBounds {
public:
    enum class Method {
        search_table, // .eh_frame_hdr's table when usable, else every FDE
        every_fde,    // every FDE, sorted (the fallback; tests compare the two)
    };

    // Reads `elf`'s call-frame sections. `elf` is borrowed and must outlive this object:
    // the search table and .eh_frame are read in place at each lookup. A damaged or
    // missing section leaves what could be read: nothing, at worst.
    explicit FunctionBounds(Elf* elf, Method method = Method::search_table);

    // The ELF vaddr where the function holding ELF vaddr `vaddr` starts: the start of
    // the FDE whose range holds it. nullopt when no FDE covers the address.
    std::optional<uint64_t> start_of(uint64_t vaddr) const;

    // Whether lookups go through .eh_frame_hdr's table (false once they fell back).
    bool uses_search_table() const { return m_table.entries != nullptr; }

private:
    struct Range {
        uint64_t start; // ELF vaddr
        uint64_t end;   // exclusive
    };
    // .eh_frame_hdr's table, in place, with what is needed to read the FDEs it names.
    struct SearchTable {
        const uint8_t* entries = nullptr; // none: no usable table
        size_t count = 0;
        size_t field_size = 0; // bytes of each of an entry's two fields
        uint8_t encoding = 0;
        uint64_t hdr_vaddr = 0;     // datarel's base
        uint64_t entries_vaddr = 0; // pcrel's base
        bool pcrel = false;         // entries relative to their own field, else to `base`
        uint64_t base = 0;          // hdr_vaddr for datarel, 0 for absptr
        const uint8_t* eh_frame = nullptr;
        size_t eh_frame_size = 0;
        uint64_t eh_frame_vaddr = 0;
    };
    enum class Outcome { found, skip, disagree };

    void read_every_fde() const;
    bool open_search_table(const GElf_Phdr& header);
    uint64_t table_field(size_t index, size_t field) const;
    bool starts_in_order() const;
    bool stays_in_address_space(int64_t field) const;
    Outcome fde_at(uint64_t fde_vaddr, uint64_t table_start, Range& range) const;
    std::optional<uint64_t> start_in_table(uint64_t vaddr) const;

    Elf* m_elf;
    bool m_big_endian = false;
    size_t m_address_size = 8;
    mutable SearchTable m_table;
    mutable std::vector<Range> m_ranges; // by start; every FDE, read when there is no table
};

} // namespace heapkit
