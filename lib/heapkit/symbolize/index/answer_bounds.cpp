// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/answer_bounds.hpp"

#include "heapkit/symbolize/dwarf/dwarf_tags.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

namespace heapkit {
namespace {

using Extents = std::vector<std::pair<uint64_t, uint64_t>>;

void append_ranges(Dwarf_Die* die, Dwarf_Addr bias, std::vector<uint64_t>& bounds,
                   Extents* scopes = nullptr) {
    Dwarf_Addr base = 0;
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0;) {
        if (low < high) {
            bounds.push_back(low + bias);
            bounds.push_back(high + bias);
            if (scopes != nullptr) {
                scopes->emplace_back(low + bias, high + bias);
            }
        }
    }
}

// DIEs whose ranges decide which frames an address gets: those DwarfFrames' lookups
// walk, and those dwarf_getscopes visits besides (Fortran's and Pascal's).
bool is_scope_for_bounds(int tag) {
    return is_code_scope_tag(tag) || tag == DW_TAG_with_stmt || tag == DW_TAG_common_inclusion;
}

// Bounded depth: corrupt DWARF can form cycles through imports.
void append_scopes(Dwarf_Die* parent, Dwarf_Addr bias, std::vector<uint64_t>& bounds,
                   Extents& scopes, int depth) {
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0) {
        return;
    }
    do {
        int tag = dwarf_tag(&child);
        Dwarf_Die target;
        if (is_scope_for_bounds(tag)) {
            append_ranges(&child, bias, bounds, &scopes);
            append_scopes(&child, bias, bounds, scopes, depth + 1);
        } else if (imported_unit(&child, &target)) {
            append_scopes(&target, bias, bounds, scopes, depth + 1);
        } else if (is_container_tag(tag)) {
            append_scopes(&child, bias, bounds, scopes, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

void append_lines(Dwarf_Die* cu, Dwarf_Addr bias, std::vector<uint64_t>& bounds) {
    Dwarf_Lines* lines = nullptr;
    size_t count = 0;
    if (dwarf_getsrclines(cu, &lines, &count) != 0) {
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        Dwarf_Addr address = 0;
        Dwarf_Line* line = dwarf_onesrcline(lines, i);
        if (line != nullptr && dwarf_lineaddr(line, &address) == 0) {
            bounds.push_back(address + bias);
        }
    }
}

// libdwfl finds an address's unit through .debug_aranges where it has them.
void append_aranges(Dwfl_Module* module, std::vector<uint64_t>& bounds) {
    Dwarf_Addr bias = 0;
    Dwarf* dwarf = dwfl_module_getdwarf(module, &bias); // borrowed
    Dwarf_Aranges* aranges = nullptr;
    size_t count = 0;
    if (dwarf == nullptr || dwarf_getaranges(dwarf, &aranges, &count) != 0) {
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        Dwarf_Addr start = 0;
        Dwarf_Word length = 0;
        Dwarf_Arange* arange = dwarf_onearange(aranges, i);
        if (arange != nullptr && dwarf_getarangeinfo(arange, &start, &length, nullptr) == 0) {
            bounds.push_back(start + bias);
            bounds.push_back(start + length + bias);
        }
    }
}

} // namespace

void append_dwarf_bounds(Dwfl_Module* module, std::vector<uint64_t>& bounds, Extents& scopes) {
    append_aranges(module, bounds);
    Dwarf_Addr bias = 0;
    for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(module, cu, &bias)) != nullptr;) {
        append_ranges(cu, bias, bounds);
        append_lines(cu, bias, bounds);
        append_scopes(cu, bias, bounds, scopes, 0);
    }
}

} // namespace heapkit
