// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/dwarf/line_positions.hpp"

#include <algorithm>

namespace heapkit {
namespace {

// A session's decoded rows (libdw's Dwarf_Line, about 40 bytes each) are let go of once
// there are this many.
constexpr size_t rows_per_session = size_t{1} << 18;

} // namespace

bool LinePositions::Unit::at(Dwarf_Addr address, SourcePosition& position) const {
    // dwfl_module_getsrc's answer: of the rows sorted by address, the last at or below
    // `address`, unless it ends a sequence.
    auto above = std::upper_bound(m_addresses.begin(), m_addresses.end(), address);
    if (above == m_addresses.begin()) {
        return false;
    }
    auto row = static_cast<size_t>(above - m_addresses.begin()) - 1;
    if (m_ends[row]) {
        return false;
    }
    position = m_rows[row];
    return true;
}

const char* LinePositions::Unit::file(uint32_t index) const {
    return m_has_files && index < m_files.size() ? m_files[index] : nullptr;
}

Dwarf* LinePositions::session() {
    if (m_session == nullptr) {
        Elf* elf = dwarf_getelf(m_dwarf); // borrowed: dwarf_end leaves it open
        m_session = elf != nullptr ? dwarf_begin_elf(elf, DWARF_C_READ, nullptr) : nullptr;
        if (Dwarf* alt = m_session != nullptr ? dwarf_getalt(m_dwarf) : nullptr) {
            dwarf_setalt(m_session, alt); // borrowed too: the module's session ends it
        }
    }
    return m_session;
}

void LinePositions::end_session() {
    if (m_session != nullptr) {
        dwarf_end(m_session);
        m_session = nullptr;
        m_session_rows = 0;
    }
}

const char* LinePositions::kept(const char* name) {
    if (name == nullptr) {
        return nullptr;
    }
    auto found = m_name_ids.find(name);
    if (found != m_name_ids.end()) {
        return found->second;
    }
    const std::string& copy = m_names.emplace_back(name);
    m_name_ids.emplace(copy, copy.c_str());
    return copy.c_str();
}

bool LinePositions::read(Dwarf_Die* cu, Dwarf_Addr bias, std::vector<uint64_t>& bounds) {
    Dwarf* own = session();
    Dwarf_Die own_cu;
    Dwarf_Lines* lines = nullptr;
    size_t count = 0;
    if (own == nullptr || dwarf_offdie(own, dwarf_dieoffset(cu), &own_cu) == nullptr ||
        dwarf_getsrclines(&own_cu, &lines, &count) != 0) {
        return false;
    }
    m_session_rows += count;
    Unit unit;
    std::vector<Dwarf_Addr> addresses(count);
    for (size_t i = 0; i < count; ++i) {
        Dwarf_Line* line = dwarf_onesrcline(lines, i);
        if (line == nullptr || dwarf_lineaddr(line, &addresses[i]) != 0 ||
            (i > 0 && addresses[i] < addresses[i - 1])) {
            return false; // dwfl_module_getsrc's binary search: only on sorted rows here
        }
    }
    const char* last_name = nullptr; // libdw's, and its copy: rows run in one file long
    const char* last_kept = nullptr;
    for (size_t i = 0; i < count; ++i) {
        Dwarf_Line* line = dwarf_onesrcline(lines, i);
        const char* name = dwarf_linesrc(line, nullptr, nullptr);
        if (name != last_name) {
            last_name = name;
            last_kept = kept(name);
        }
        bool ends = false;
        int number = 0;
        int column = 0;
        dwarf_lineendsequence(line, &ends);
        dwarf_lineno(line, &number);
        dwarf_linecol(line, &column);
        SourcePosition position{last_kept, number > 0 ? static_cast<uint32_t>(number) : 0,
                                column > 0 ? static_cast<uint32_t>(column) : 0};
        if (!unit.m_addresses.empty() && unit.m_addresses.back() == addresses[i]) {
            unit.m_rows.back() = position; // the last row at an address answers for it
            unit.m_ends.back() = ends;
        } else {
            unit.m_addresses.push_back(addresses[i]);
            unit.m_rows.push_back(position);
            unit.m_ends.push_back(ends);
        }
        bounds.push_back(addresses[i] + bias);
    }
    Dwarf_Files* files = nullptr;
    size_t file_count = 0;
    if (dwarf_getsrcfiles(&own_cu, &files, &file_count) == 0) {
        unit.m_has_files = true;
        unit.m_files.reserve(file_count);
        for (size_t i = 0; i < file_count; ++i) {
            unit.m_files.push_back(kept(dwarf_filesrc(files, i, nullptr, nullptr)));
        }
    }
    unit.m_addresses.shrink_to_fit(); // held until the module's last address is answered
    unit.m_rows.shrink_to_fit();
    m_units.insert_or_assign(dwarf_dieoffset(cu), std::move(unit));
    if (m_session_rows >= rows_per_session) {
        end_session();
    }
    return true;
}

const LinePositions::Unit* LinePositions::unit(Dwarf_Die* cu) const {
    auto found = m_units.find(dwarf_dieoffset(cu));
    return found != m_units.end() ? &found->second : nullptr;
}

} // namespace heapkit
