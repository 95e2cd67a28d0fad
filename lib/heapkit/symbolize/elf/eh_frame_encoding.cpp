// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/eh_frame_encoding.hpp"

#include <cstring>

namespace heapkit::eh_frame {

// The encoding of a CIE's FDEs' addresses: .debug_frame's are plain addresses, and
// .eh_frame's are given by the 'R' of a "z" augmentation (absptr without one).
// nullopt for an augmentation this cannot read past.
std::optional<uint8_t> fde_encoding(std::string_view augmentation, const uint8_t* data, size_t size,
                                    bool eh_frame, bool big_endian, size_t address_size) {
    if (!eh_frame || augmentation.empty()) {
        return DW_EH_PE_absptr;
    }
    if (augmentation.front() != 'z' || data == nullptr) {
        return std::nullopt;
    }
    Encoded fields(data, data + size, big_endian, address_size);
    uint8_t encoding = DW_EH_PE_absptr;
    for (char c : augmentation.substr(1)) {
        if (c == 'R') {
            auto value = fields.byte();
            if (!value) {
                return std::nullopt;
            }
            encoding = *value;
        } else if (c == 'L') {
            if (!fields.byte()) {
                return std::nullopt;
            }
        } else if (c == 'P') {
            auto personality = fields.byte();
            if (!personality || !fields.value(*personality)) {
                return std::nullopt;
            }
        } else if (c != 'S' && c != 'B') {
            break; // the rest is unknown, but 'R' comes first in what compilers write
        }
    }
    return encoding;
}

// Whether the FDEs of a CIE with `encoding` can be read: their start is an address or
// relative to itself (what linkers write), with no indirection.
bool readable_encoding(uint8_t encoding) {
    uint8_t application = encoding & 0x70;
    return (encoding & DW_EH_PE_indirect) == 0 &&
           (application == DW_EH_PE_absptr || application == DW_EH_PE_pcrel);
}

// The start of a CFI entry: its length, in the 32-bit or 64-bit DWARF format. Leaves
// `fields` after the length and gives where the entry ends, nullopt for a terminator
// or an entry that does not fit.
std::optional<EntryFormat> entry_format(Encoded& fields, const uint8_t* section_end) {
    auto length = fields.value(DW_EH_PE_udata4);
    size_t offset_size = 4;
    if (length == 0xffffffffu) {
        length = fields.value(DW_EH_PE_udata8);
        offset_size = 8;
    } else if (length && *length >= 0xfffffff0u) {
        return std::nullopt; // reserved
    }
    if (!length || *length == 0 ||
        *length > static_cast<uint64_t>(section_end - fields.position())) {
        return std::nullopt;
    }
    return EntryFormat{fields.position() + *length, offset_size};
}

// The FDE pointer encoding of the .eh_frame CIE at `cie` (an entry ending before the
// section's `end`), read as libdw reads it for the full pass. nullopt for anything else (a version
// or an augmentation this does not read): the caller then reads every FDE.
std::optional<uint8_t> cie_fde_encoding(const uint8_t* cie, const uint8_t* end, bool big_endian,
                                        size_t address_size) {
    Encoded fields(cie, end, big_endian, address_size);
    auto format = entry_format(fields, end);
    if (!format) {
        return std::nullopt;
    }
    Encoded body(fields.position(), format->end, big_endian, address_size);
    auto id = body.value(format->offset_size == 8 ? DW_EH_PE_udata8 : DW_EH_PE_udata4);
    auto version = body.byte();
    if (!id || *id != 0 || !version || (*version != 1 && *version != 3)) {
        return std::nullopt;
    }
    const uint8_t* text = body.position();
    const void* nul = std::memchr(text, 0, static_cast<size_t>(format->end - text));
    if (nul == nullptr) {
        return std::nullopt;
    }
    std::string_view augmentation(reinterpret_cast<const char*>(text),
                                  static_cast<const uint8_t*>(nul) - text);
    Encoded rest(static_cast<const uint8_t*>(nul) + 1, format->end, big_endian, address_size);
    // code and data alignment factors, return address register
    bool skipped =
        rest.value(DW_EH_PE_uleb128) && rest.value(DW_EH_PE_sleb128) &&
        (*version == 1 ? rest.byte().has_value() : rest.value(DW_EH_PE_uleb128).has_value());
    if (!skipped) {
        return std::nullopt;
    }
    const uint8_t* data = nullptr;
    size_t size = 0;
    if (!augmentation.empty() && augmentation.front() == 'z') {
        auto length = rest.value(DW_EH_PE_uleb128);
        if (!length || *length > static_cast<uint64_t>(format->end - rest.position())) {
            return std::nullopt;
        }
        data = rest.position();
        size = static_cast<size_t>(*length);
    }
    return fde_encoding(augmentation, data, size, true, big_endian, address_size);
}

// `value`, read in `encoding`, applied: as it is (absptr), or relative to the ELF vaddr
// of its own field (pcrel) or of .eh_frame_hdr (datarel). nullopt for an indirect
// value or another application, which the table is not written with.
std::optional<uint64_t> applied(uint64_t value, uint8_t encoding, uint64_t field_vaddr,
                                uint64_t hdr_vaddr, size_t address_size) {
    if ((encoding & DW_EH_PE_indirect) != 0) {
        return std::nullopt;
    }
    switch (encoding & 0x70) {
    case DW_EH_PE_absptr:
        break;
    case DW_EH_PE_pcrel:
        value += field_vaddr;
        break;
    case DW_EH_PE_datarel:
        value += hdr_vaddr;
        break;
    default:
        return std::nullopt;
    }
    return address_size == 4 ? value & 0xffffffffu : value;
}

// The bytes of a value in `encoding`'s format when that is fixed (a binary search needs
// entries of one size), else 0.
size_t fixed_size(uint8_t encoding) {
    switch (encoding & 0x0f) {
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2:
        return 2;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4:
        return 4;
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        return 8;
    default:
        return 0;
    }
}

} // namespace heapkit::eh_frame
