// SPDX-License-Identifier: MIT
// Which DIEs matter for naming code, shared by the walks that must agree on it: the
// lookups (dwarf_frames.cpp) and the bounds of their answers (answer_bounds.cpp).
#pragma once

#include <cstddef>
#include <dwarf.h>
#include <elfutils/libdw.h>

namespace heapkit {

// DIEs without addresses of their own that can hold functions: namespaces, types, and
// partial units imported through DW_TAG_imported_unit (as dwz leaves debug info).
inline bool is_container_tag(int tag) {
    switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_enumeration_type:
    case DW_TAG_interface_type:
    case DW_TAG_partial_unit:
        return true;
    default:
        return false;
    }
}

// Functions: what a frame is made of.
inline bool is_function_tag(int tag) {
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

// DIEs whose address ranges decide which functions hold an address.
inline bool is_code_scope_tag(int tag) {
    return is_function_tag(tag) || tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
           tag == DW_TAG_catch_block;
}

// Calls visit(low, high) for each non-empty address range [low, high) of `die` (its
// DW_AT_low_pc/high_pc or DW_AT_ranges), in the unit's addresses.
template <typename Visit> void for_each_range(Dwarf_Die* die, Visit&& visit) {
    Dwarf_Addr base = 0;
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0;) {
        if (low < high) {
            visit(low, high);
        }
    }
}

// The partial unit a DW_TAG_imported_unit brings in (dwz moves shared DIEs there), into
// `target`; false for any other DIE or an import that does not resolve.
inline bool imported_unit(Dwarf_Die* die, Dwarf_Die* target) {
    Dwarf_Attribute import;
    return dwarf_tag(die) == DW_TAG_imported_unit &&
           dwarf_formref_die(dwarf_attr(die, DW_AT_import, &import), target) != nullptr;
}

} // namespace heapkit
