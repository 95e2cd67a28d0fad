// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/function_bounds.hpp"

#include "heapkit/symbolize/elf/eh_frame_encoding.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <map>
#include <string_view>

namespace heapkit {
namespace {

using namespace eh_frame;

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

FunctionBounds::FunctionBounds(Elf* elf, Method method)
    : m_elf(elf) {
    const unsigned char* ident =
        elf == nullptr ? nullptr : (const unsigned char*)elf_getident(elf, nullptr);
    if (ident == nullptr) {
        return; // nothing to read
    }
    m_big_endian = ident[EI_DATA] == ELFDATA2MSB;
    m_address_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    size_t count = 0;
    if (method == Method::search_table && elf_getphdrnum(elf, &count) == 0) {
        for (size_t i = 0; i < count; ++i) {
            GElf_Phdr header;
            if (gelf_getphdr(elf, static_cast<int>(i), &header) != nullptr &&
                header.p_type == PT_GNU_EH_FRAME) {
                open_search_table(header);
                break;
            }
        }
    }
    if (!uses_search_table()) {
        read_every_fde();
    }
}

void FunctionBounds::read_every_fde() const {
    const unsigned char* ident = (const unsigned char*)elf_getident(m_elf, nullptr);
    bool eh_frame = true;
    Section section = find_section(m_elf, ".eh_frame");
    if (section.data == nullptr) {
        eh_frame = false;
        section = find_section(m_elf, ".debug_frame");
    }
    if (ident == nullptr || section.data == nullptr) {
        return;
    }
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
            std::string_view augmentation =
                entry.cie.augmentation != nullptr ? entry.cie.augmentation : "";
            encodings[here] = fde_encoding(augmentation, entry.cie.augmentation_data,
                                           entry.cie.augmentation_data_size, eh_frame, m_big_endian,
                                           m_address_size);
            continue;
        }
        auto cie = encodings.find(entry.fde.CIE_pointer);
        if (cie == encodings.end() || !cie->second || !readable_encoding(*cie->second)) {
            continue;
        }
        uint8_t encoding = *cie->second;
        Encoded fields(entry.fde.start, entry.fde.end, m_big_endian, m_address_size);
        auto start = fields.value(encoding);
        auto length = fields.value(encoding & 0x0f);
        if (!start || !length || *length == 0) {
            continue;
        }
        if ((encoding & 0x70) == DW_EH_PE_pcrel) {
            *start += section.vaddr + static_cast<uint64_t>(entry.fde.start - base);
        }
        if (m_address_size == 4) {
            *start &= 0xffffffffu;
        }
        m_ranges.push_back({*start, *start + *length});
    }
    std::sort(m_ranges.begin(), m_ranges.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
}

// The table of .eh_frame_hdr (the LSB's layout: version 1, the encodings of
// eh_frame_ptr, fde_count and the table's entries, then those values, then fde_count
// pairs of initial location and FDE address). Read with the encodings that LLVM's
// libunwind binary-searches (fixed-size fields, absolute or relative to the header or
// to the field); GNU ld and lld write datarel|sdata4. Anything else leaves the table
// unused.
bool FunctionBounds::open_search_table(const GElf_Phdr& header) {
    Section eh_frame = find_section(m_elf, ".eh_frame");
    Elf_Data* chunk = header.p_filesz >= 4
                          ? elf_getdata_rawchunk(m_elf, static_cast<int64_t>(header.p_offset),
                                                 header.p_filesz, ELF_T_BYTE)
                          : nullptr;
    if (eh_frame.data == nullptr || chunk == nullptr || chunk->d_buf == nullptr ||
        chunk->d_size != header.p_filesz) {
        return false;
    }
    const auto* hdr = static_cast<const uint8_t*>(chunk->d_buf);
    const uint8_t* end = hdr + chunk->d_size;
    const uint8_t version = hdr[0];
    const uint8_t pointer_encoding = hdr[1];
    const uint8_t count_encoding = hdr[2];
    const uint8_t table_encoding = hdr[3];
    if (version != 1 || pointer_encoding == DW_EH_PE_omit || count_encoding == DW_EH_PE_omit ||
        table_encoding == DW_EH_PE_omit) {
        return false;
    }
    Encoded fields(hdr + 4, end, m_big_endian, m_address_size);
    auto pointer = fields.value(pointer_encoding);
    auto count = fields.value(count_encoding); // a plain number: no application
    if (pointer) {
        pointer =
            applied(*pointer, pointer_encoding, header.p_vaddr + 4, header.p_vaddr, m_address_size);
    }
    size_t field_size = fixed_size(table_encoding);
    bool searchable = field_size != 0 && applied(0, table_encoding, 0, 0, m_address_size);
    if (!pointer || *pointer != eh_frame.vaddr || !count || (count_encoding & 0xf0) != 0 ||
        !searchable) {
        return false;
    }
    size_t room = static_cast<size_t>(end - fields.position()) / (2 * field_size);
    if (*count == 0 || *count > room) { // a negative count too
        return false;
    }
    uint8_t application = table_encoding & 0x70;
    m_table = SearchTable{fields.position(),
                          static_cast<size_t>(*count),
                          field_size,
                          table_encoding,
                          header.p_vaddr,
                          header.p_vaddr + static_cast<uint64_t>(fields.position() - hdr),
                          application == DW_EH_PE_pcrel,
                          application == DW_EH_PE_datarel ? header.p_vaddr : 0,
                          static_cast<const uint8_t*>(eh_frame.data->d_buf),
                          eh_frame.data->d_size,
                          eh_frame.vaddr};
    // A binary search needs the order the format promises: a table out of it is damage.
    if (!starts_in_order()) {
        m_table = {};
        return false;
    }
    return true;
}

// Whether the table's starts rise. The table linkers write (4-byte fields, relative to
// the header or absolute, in this machine's byte order) is read as raw fields in a tight
// loop: with one base added to each, the starts are in the fields' order unless the
// addition wraps around the address space, which the first and last fields tell. That
// loop was a tenth of a warm run's instructions through table_field.
bool FunctionBounds::starts_in_order() const {
    bool swap = m_big_endian != (std::endian::native == std::endian::big);
    if (m_table.field_size == 4 && !m_table.pcrel && !swap) {
        bool is_signed = (m_table.encoding & 0x08) != 0;
        auto field = [&](size_t i) {
            uint32_t raw;
            std::memcpy(&raw, m_table.entries + i * 8, sizeof raw);
            return is_signed ? int64_t{static_cast<int32_t>(raw)} : int64_t{raw};
        };
        int64_t first = field(0);
        int64_t previous = first;
        for (size_t i = 1; i < m_table.count; ++i) {
            int64_t value = field(i);
            if (value < previous) {
                return false;
            }
            previous = value;
        }
        if (stays_in_address_space(first) && stays_in_address_space(previous)) {
            return true;
        }
    }
    for (uint64_t i = 1, previous = table_field(0, 0); i < m_table.count; ++i) {
        uint64_t start = table_field(i, 0);
        if (start < previous) {
            return false;
        }
        previous = start;
    }
    return true;
}

// Whether the table's base plus `field` (a 4-byte field, extended) is an address without
// wrapping around: below 2^32 for a 32-bit file, 2^64 for a 64-bit one.
bool FunctionBounds::stays_in_address_space(int64_t field) const {
    uint64_t base = m_table.base;
    if (m_address_size == 4) {
        int64_t sum = static_cast<int64_t>(base & 0x1ffffffffu) + field; // no overflow
        return base <= 0xffffffffu && sum >= 0 && sum <= int64_t{0xffffffff};
    }
    auto magnitude = static_cast<uint64_t>(field < 0 ? -field : field);
    return field < 0 ? base >= magnitude : base <= UINT64_MAX - magnitude;
}

// Field `field` (0: initial location, 1: FDE address) of entry `index`, applied.
uint64_t FunctionBounds::table_field(size_t index, size_t field) const {
    // Read directly, not through Encoded: opening the table reads every start once.
    size_t offset = (index * 2 + field) * m_table.field_size;
    const uint8_t* p = m_table.entries + offset; // in bounds: checked at open
    bool swap = m_big_endian != (std::endian::native == std::endian::big);
    bool is_signed = (m_table.encoding & 0x08) != 0;
    uint64_t value = 0;
    if (m_table.field_size == 2) {
        uint16_t raw;
        std::memcpy(&raw, p, sizeof raw);
        raw = swap ? __builtin_bswap16(raw) : raw;
        value = is_signed ? static_cast<uint64_t>(static_cast<int16_t>(raw)) : raw;
    } else if (m_table.field_size == 4) {
        uint32_t raw;
        std::memcpy(&raw, p, sizeof raw);
        raw = swap ? __builtin_bswap32(raw) : raw;
        value = is_signed ? static_cast<uint64_t>(static_cast<int32_t>(raw)) : raw;
    } else {
        std::memcpy(&value, p, sizeof value);
        value = swap ? __builtin_bswap64(value) : value;
    }
    // The application (checked at open: absptr, pcrel or datarel), as applied() does it,
    // inline: opening the table reads every start once, a tenth of a warm run through
    // that call.
    value += m_table.pcrel ? m_table.entries_vaddr + offset : m_table.base;
    return m_address_size == 4 ? value & 0xffffffffu : value;
}

// The range of the FDE at ELF vaddr `fde_vaddr`, which the table says starts at
// `table_start`: found, skip (empty, as the full read skips it), or disagree (not an
// FDE this reads the way the full read does, or not where the table says).
FunctionBounds::Outcome FunctionBounds::fde_at(uint64_t fde_vaddr, uint64_t table_start,
                                               Range& range) const {
    const uint8_t* section_end = m_table.eh_frame + m_table.eh_frame_size;
    if (fde_vaddr < m_table.eh_frame_vaddr ||
        fde_vaddr - m_table.eh_frame_vaddr >= m_table.eh_frame_size) {
        return Outcome::disagree;
    }
    const uint8_t* fde = m_table.eh_frame + (fde_vaddr - m_table.eh_frame_vaddr);
    Encoded fields(fde, section_end, m_big_endian, m_address_size);
    auto format = entry_format(fields, section_end);
    if (!format) {
        return Outcome::disagree;
    }
    const uint8_t* pointer_field = fields.position();
    Encoded body(pointer_field, format->end, m_big_endian, m_address_size);
    auto cie_pointer = body.value(format->offset_size == 8 ? DW_EH_PE_udata8 : DW_EH_PE_udata4);
    if (!cie_pointer || *cie_pointer == 0 ||
        *cie_pointer > static_cast<uint64_t>(pointer_field - m_table.eh_frame)) {
        return Outcome::disagree; // a CIE, or a pointer out of the section
    }
    auto encoding =
        cie_fde_encoding(pointer_field - *cie_pointer, section_end, m_big_endian, m_address_size);
    if (!encoding || !readable_encoding(*encoding)) {
        return Outcome::disagree;
    }
    const uint8_t* start_field = body.position();
    auto start = body.value(*encoding);
    auto length = body.value(*encoding & 0x0f);
    if (!start || !length) {
        return Outcome::disagree;
    }
    if ((*encoding & 0x70) == DW_EH_PE_pcrel) {
        *start += m_table.eh_frame_vaddr + static_cast<uint64_t>(start_field - m_table.eh_frame);
    }
    if (m_address_size == 4) {
        *start &= 0xffffffffu;
    }
    if (*start != table_start) {
        return Outcome::disagree;
    }
    if (*length == 0) {
        return Outcome::skip;
    }
    range = {*start, *start + *length};
    return Outcome::found;
}

std::optional<uint64_t> FunctionBounds::start_in_table(uint64_t vaddr) const {
    size_t low = 0;
    size_t high = m_table.count; // the first entry starting after vaddr
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (table_field(middle, 0) <= vaddr) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    // The nearest entry before vaddr, past empty FDEs (which the full read leaves out);
    // a run of them longer than compilers write is read the full way.
    constexpr size_t max_skips = 64;
    bool disagree = false;
    for (size_t i = low, skips = 0; i > 0 && !disagree; ++skips) {
        --i;
        Range range{};
        Outcome outcome = skips < max_skips ? fde_at(table_field(i, 1), table_field(i, 0), range)
                                            : Outcome::disagree;
        if (outcome == Outcome::found) {
            return vaddr < range.end ? std::optional<uint64_t>(range.start) : std::nullopt;
        }
        disagree = outcome == Outcome::disagree;
    }
    if (!disagree) {
        return std::nullopt; // no FDE starts at or before vaddr
    }
    // The table and .eh_frame disagree: from now on, every FDE as the full read sees it.
    m_table = {};
    read_every_fde();
    return start_of(vaddr);
}

std::optional<uint64_t> FunctionBounds::start_of(uint64_t vaddr) const {
    if (uses_search_table()) {
        return start_in_table(vaddr);
    }
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
