// SPDX-License-Identifier: MIT
// The DIEs of one compilation unit that place code, read in one walk of the unit. An
// address index needs them twice over: where answers may change (answer_bounds.cpp) and
// which chain of functions holds each address (DwarfFrames' painting). Each walk through
// libdw reads every DIE of the unit (dwarf_siblingof skips a DIE's children one by one
// where it has no DW_AT_sibling) and every scope's attributes for its ranges; this one
// keeps what they need, so that the rest is read from memory.
#pragma once

#include <cstdint>
#include <elfutils/libdw.h>
#include <span>
#include <utility>
#include <vector>

namespace heapkit {

class CodeTree {
public:
    enum class Kind : uint8_t {
        code_scope,  // a function, inlined instance or block (is_code_scope_tag)
        other_scope, // DW_TAG_with_stmt, DW_TAG_common_inclusion: ranges for the bounds only
        group,       // a namespace, type or imported partial unit (its children, without it)
    };
    struct Node {
        Dwarf_Die die;        // borrowed from libdw; for a group, the DIE whose children it has
        uint32_t end;         // the index past this node's subtree: its next sibling's
        uint32_t first_range; // its ranges: ranges()[first_range, first_range + range_count)
        uint32_t range_count;
        uint16_t level; // 0 for the unit's children, one more a level down
        Kind kind;
        bool is_function;    // is_function_tag
        bool holds_function; // DW_TAG_subprogram or DW_TAG_entry_point: a function with code
    };
    using Range = std::pair<Dwarf_Addr, Dwarf_Addr>; // [low, high), low < high, unit's addresses

    // Walks `cu`'s children (borrowed; through namespaces, types and imported partial units)
    // down to max_level levels: scopes with no ranges and nothing below them are left out.
    explicit CodeTree(Dwarf_Die* cu) { read(cu); }
    CodeTree() = default;

    // Reads `cu` in place of the unit read before, keeping the memory: one tree serves
    // every unit of a module in turn.
    void read(Dwarf_Die* cu);

    // Nodes in DIE order, each before its subtree: node i's first child is i + 1 when
    // i + 1 < nodes()[i].end, the next child at that child's end.
    const std::vector<Node>& nodes() const { return m_nodes; }
    std::span<const Range> ranges(const Node& node) const {
        return {m_ranges.data() + node.first_range, node.range_count};
    }

    // How deep a walk goes below where it starts (corrupt DWARF can form cycles through
    // imports): from the unit for the bounds and the functions, from a function at any
    // of those levels for its painting. The tree holds both.
    static constexpr int walk_levels = 64;
    static constexpr int max_level = 2 * walk_levels;

private:
    void add_children(Dwarf_Die* parent, int level);

    std::vector<Node> m_nodes;
    std::vector<Range> m_ranges;
};

} // namespace heapkit
