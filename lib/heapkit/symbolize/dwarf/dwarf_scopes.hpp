// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <elfutils/libdw.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace heapkit {

// The namespaces, classes, structs and unions around DWARF declarations, for naming
// functions that carry no linkage name (GCC gives none to members of types with internal
// linkage, such as anything in an anonymous namespace): "Insert" becomes
// "leveldb::(anonymous namespace)::LRUCache::Insert", as the demangler spells a linkage
// name. libdw has no parent pointers: each unit's scopes are indexed on first use, by
// their DIE offsets, and a DIE's scope is the innermost one whose DIE range holds it.
// Holds DIEs of one Dwarf session (borrowed): it must not outlive it.
class DwarfScopes {
public:
    // "ns::(anonymous namespace)::Class::name" for the function `die` (a subprogram or
    // an inlined instance, followed through DW_AT_abstract_origin and
    // DW_AT_specification to its declaration's scopes); its bare name at file scope;
    // empty when it has no name. Template arguments appear where the DIEs' names carry
    // them (GCC names "Pool<long int>"), builtin types spelled as the demangler does
    // ("Pool<long>").
    std::string qualified_name(Dwarf_Die* die);

private:
    struct Scope {
        Dwarf_Off start;    // the scope DIE's offset
        Dwarf_Off end = 0;  // offset past its children (see index_unit)
        int32_t parent;     // index of the enclosing scope, or -1 at unit level
        Dwarf_Die die;      // borrowed from libdw
        std::string prefix; // "a::b::" up to and including this scope, once computed
        bool has_prefix = false;
    };
    struct UnitScopes {
        std::vector<Scope> scopes; // in DIE order: enclosing scopes before inner ones
    };
    static void index_children(Dwarf_Die* parent, int32_t parent_index, UnitScopes& unit,
                               int depth);
    UnitScopes& unit_of(Dwarf_Die* die);
    int32_t enclosing(const UnitScopes& unit, Dwarf_Off offset) const;
    std::string prefix_around(Dwarf_Die* die, int depth);
    const std::string& prefix_through(UnitScopes& unit, int32_t index, int depth);

    std::unordered_map<const void*, UnitScopes> m_units; // by the unit DIE's bytes
};

} // namespace heapkit
