// SPDX-License-Identifier: MIT
// What .eh_frame and .eh_frame_hdr are written in: the LSB's encoded values (DW_EH_PE_*),
// read with every read bounds-checked, and the headers of CFI entries and CIEs, for
// FunctionBounds's lookups in .eh_frame_hdr's search table (function_bounds.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <dwarf.h>
#include <optional>
#include <string_view>

namespace heapkit::eh_frame {

// A bounds-checked reader of the encoded pointers of .eh_frame (the LSB's DW_EH_PE_*).
class Encoded {
public:
    Encoded(const uint8_t* p, const uint8_t* end, bool big_endian, size_t address_size)
        : m_p(p)
        , m_end(end)
        , m_big_endian(big_endian)
        , m_address_size(address_size) {}

    const uint8_t* position() const { return m_p; }

    // A value in `encoding`'s format, without its application (pcrel and the like).
    std::optional<uint64_t> value(uint8_t encoding) {
        switch (encoding & 0x0f) {
        case DW_EH_PE_absptr:
            return fixed(m_address_size, false);
        case DW_EH_PE_uleb128:
            return leb128(false);
        case DW_EH_PE_udata2:
            return fixed(2, false);
        case DW_EH_PE_udata4:
            return fixed(4, false);
        case DW_EH_PE_udata8:
            return fixed(8, false);
        case DW_EH_PE_sleb128:
            return leb128(true);
        case DW_EH_PE_sdata2:
            return fixed(2, true);
        case DW_EH_PE_sdata4:
            return fixed(4, true);
        case DW_EH_PE_sdata8:
            return fixed(8, true);
        default:
            return std::nullopt;
        }
    }

    std::optional<uint8_t> byte() {
        if (m_p == m_end) {
            return std::nullopt;
        }
        return *m_p++;
    }

private:
    std::optional<uint64_t> fixed(size_t size, bool is_signed) {
        if (size > 8 || static_cast<size_t>(m_end - m_p) < size) {
            return std::nullopt;
        }
        uint64_t value = 0;
        for (size_t i = 0; i < size; ++i) {
            uint64_t byte = m_p[m_big_endian ? i : size - 1 - i];
            value = value << 8 | byte;
        }
        m_p += size;
        if (is_signed && size < 8 && (value >> (size * 8 - 1)) != 0) {
            value |= ~uint64_t{0} << (size * 8);
        }
        return value;
    }

    std::optional<uint64_t> leb128(bool is_signed) {
        uint64_t value = 0;
        unsigned shift = 0;
        while (m_p != m_end) {
            uint8_t byte = *m_p++;
            if (shift < 64) {
                value |= uint64_t{byte & 0x7fu} << shift;
            }
            shift += 7;
            if ((byte & 0x80) == 0) {
                if (is_signed && shift < 64 && (byte & 0x40) != 0) {
                    value |= ~uint64_t{0} << shift;
                }
                return value;
            }
        }
        return std::nullopt;
    }

    const uint8_t* m_p;
    const uint8_t* m_end;
    bool m_big_endian;
    size_t m_address_size;
};

// The encoding of a CIE's FDEs' addresses: .debug_frame's are plain addresses, and
// .eh_frame's are given by the 'R' of a "z" augmentation (absptr without one).
// nullopt for an augmentation this cannot read past.
std::optional<uint8_t> fde_encoding(std::string_view augmentation, const uint8_t* data, size_t size,
                                    bool eh_frame, bool big_endian, size_t address_size);

// Whether the FDEs of a CIE with `encoding` can be read: their start is an address or
// relative to itself (what linkers write), with no indirection.
bool readable_encoding(uint8_t encoding);

// The start of a CFI entry: its length, in the 32-bit or 64-bit DWARF format. Leaves
// `fields` after the length and gives where the entry ends, nullopt for a terminator
// or an entry that does not fit.
struct EntryFormat {
    const uint8_t* end;
    size_t offset_size;
};
std::optional<EntryFormat> entry_format(Encoded& fields, const uint8_t* section_end);

// The FDE pointer encoding of the .eh_frame CIE at `cie` (an entry ending before the
// section's `end`), read as libdw reads it for the full pass. nullopt for anything else (a version
// or an augmentation this does not read): the caller then reads every FDE.
std::optional<uint8_t> cie_fde_encoding(const uint8_t* cie, const uint8_t* end, bool big_endian,
                                        size_t address_size);

// `value`, read in `encoding`, applied: as it is (absptr), or relative to the ELF vaddr
// of its own field (pcrel) or of .eh_frame_hdr (datarel). nullopt for an indirect
// value or another application, which the table is not written with.
std::optional<uint64_t> applied(uint64_t value, uint8_t encoding, uint64_t field_vaddr,
                                uint64_t hdr_vaddr, size_t address_size);

// The bytes of a value in `encoding`'s format when that is fixed (a binary search needs
// entries of one size), else 0.
size_t fixed_size(uint8_t encoding);

} // namespace heapkit::eh_frame
