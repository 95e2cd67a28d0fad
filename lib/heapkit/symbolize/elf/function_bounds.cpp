// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/function_bounds.hpp"

#include <algorithm>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <map>
#include <string_view>

namespace heapkit {
namespace {

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
std::optional<uint8_t> fde_encoding(const Dwarf_CIE& cie, bool eh_frame, bool big_endian,
                                    size_t address_size) {
    std::string_view augmentation = cie.augmentation != nullptr ? cie.augmentation : "";
    if (!eh_frame || augmentation.empty()) {
        return DW_EH_PE_absptr;
    }
    if (augmentation.front() != 'z' || cie.augmentation_data == nullptr) {
        return std::nullopt;
    }
    Encoded data(cie.augmentation_data, cie.augmentation_data + cie.augmentation_data_size,
                 big_endian, address_size);
    uint8_t encoding = DW_EH_PE_absptr;
    for (char c : augmentation.substr(1)) {
        if (c == 'R') {
            auto value = data.byte();
            if (!value) {
                return std::nullopt;
            }
            encoding = *value;
        } else if (c == 'L') {
            if (!data.byte()) {
                return std::nullopt;
            }
        } else if (c == 'P') {
            auto personality = data.byte();
            if (!personality || !data.value(*personality)) {
                return std::nullopt;
            }
        } else if (c != 'S' && c != 'B') {
            break; // the rest is unknown, but 'R' comes first in what compilers write
        }
    }
    return encoding;
}

struct Section {
    Elf_Data* data = nullptr;
    uint64_t vaddr = 0; // sh_addr
};

Section find_section(Elf* elf, std::string_view wanted) {
    size_t names = 0;
    if (elf_getshdrstrndx(elf, &names) != 0) {
        return {};
    }
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr || header.sh_type == SHT_NOBITS) {
            continue;
        }
        const char* name = elf_strptr(elf, names, header.sh_name);
        if (name != nullptr && wanted == name) {
            Elf_Data* data = elf_getdata(section, nullptr);
            return data != nullptr && data->d_buf != nullptr ? Section{data, header.sh_addr}
                                                             : Section{};
        }
    }
    return {};
}

} // namespace

FunctionBounds::FunctionBounds(Elf* elf) {
    const unsigned char* ident =
        elf == nullptr ? nullptr : (const unsigned char*)elf_getident(elf, nullptr);
    if (ident == nullptr) {
        return;
    }
    bool eh_frame = true;
    Section section = find_section(elf, ".eh_frame");
    if (section.data == nullptr) {
        eh_frame = false;
        section = find_section(elf, ".debug_frame");
    }
    if (section.data == nullptr) {
        return;
    }
    bool big_endian = ident[EI_DATA] == ELFDATA2MSB;
    size_t address_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    const auto* base = static_cast<const uint8_t*>(section.data->d_buf);
    std::map<Dwarf_Off, std::optional<uint8_t>> encodings; // per CIE offset
    Dwarf_Off offset = 0;
    for (size_t guard = 0; offset != static_cast<Dwarf_Off>(-1) && guard < section.data->d_size;
         ++guard) {
        Dwarf_Off next = static_cast<Dwarf_Off>(-1);
        Dwarf_CFI_Entry entry;
        int status = dwarf_next_cfi(ident, section.data, eh_frame, offset, &next, &entry);
        if (status == 1 ||
            (status != 0 && (next == static_cast<Dwarf_Off>(-1) || next <= offset))) {
            break;
        }
        Dwarf_Off here = offset;
        offset = next;
        if (status != 0) {
            continue; // an unusable entry that can be skipped
        }
        if (dwarf_cfi_cie_p(&entry)) {
            encodings[here] = fde_encoding(entry.cie, eh_frame, big_endian, address_size);
            continue;
        }
        auto cie = encodings.find(entry.fde.CIE_pointer);
        if (cie == encodings.end() || !cie->second) {
            continue;
        }
        uint8_t encoding = *cie->second;
        uint8_t application = encoding & 0x70;
        if ((encoding & DW_EH_PE_indirect) != 0 ||
            (application != DW_EH_PE_absptr && application != DW_EH_PE_pcrel)) {
            continue;
        }
        Encoded fields(entry.fde.start, entry.fde.end, big_endian, address_size);
        auto start = fields.value(encoding);
        auto length = fields.value(encoding & 0x0f);
        if (!start || !length || *length == 0) {
            continue;
        }
        if (application == DW_EH_PE_pcrel) {
            *start += section.vaddr + static_cast<uint64_t>(entry.fde.start - base);
        }
        if (address_size == 4) {
            *start &= 0xffffffffu;
        }
        m_ranges.push_back({*start, *start + *length});
    }
    std::sort(m_ranges.begin(), m_ranges.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
}

std::optional<uint64_t> FunctionBounds::start_of(uint64_t vaddr) const {
    auto after = std::upper_bound(m_ranges.begin(), m_ranges.end(), vaddr,
                                  [](uint64_t v, const Range& r) { return v < r.start; });
    if (after == m_ranges.begin()) {
        return std::nullopt;
    }
    const Range& range = *std::prev(after);
    if (vaddr >= range.end) {
        return std::nullopt;
    }
    return range.start;
}

} // namespace heapkit
