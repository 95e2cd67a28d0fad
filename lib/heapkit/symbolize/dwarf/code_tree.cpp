// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/dwarf/code_tree.hpp"

#include "heapkit/symbolize/dwarf/dwarf_tags.hpp"

#include <dwarf.h>

namespace heapkit {
namespace {

// Scopes whose ranges bound the answers: those of the lookups, and those dwarf_getscopes
// visits besides (Fortran's and Pascal's).
bool is_other_scope_tag(int tag) {
    return tag == DW_TAG_with_stmt || tag == DW_TAG_common_inclusion;
}

} // namespace

void CodeTree::read(Dwarf_Die* cu) {
    m_nodes.clear();
    m_ranges.clear();
    add_children(cu, 0);
}

void CodeTree::add_children(Dwarf_Die* parent, int level) {
    Dwarf_Die child;
    if (level > max_level || dwarf_child(parent, &child) != 0) {
        return;
    }
    do {
        int tag = dwarf_tag(&child);
        auto at = static_cast<uint32_t>(m_nodes.size());
        Node node{child,
                  0,
                  static_cast<uint32_t>(m_ranges.size()),
                  0,
                  static_cast<uint16_t>(level),
                  Kind::group,
                  is_function_tag(tag),
                  tag == DW_TAG_subprogram || tag == DW_TAG_entry_point};
        Dwarf_Die target;
        if (is_code_scope_tag(tag) || is_other_scope_tag(tag)) {
            node.kind = is_code_scope_tag(tag) ? Kind::code_scope : Kind::other_scope;
            for_each_range(
                &child, [&](Dwarf_Addr low, Dwarf_Addr high) { m_ranges.emplace_back(low, high); });
            node.range_count = static_cast<uint32_t>(m_ranges.size()) - node.first_range;
            m_nodes.push_back(node);
            add_children(&child, level + 1);
        } else if (imported_unit(&child, &target)) {
            node.die = target;
            m_nodes.push_back(node);
            add_children(&target, level + 1);
        } else if (is_container_tag(tag)) {
            m_nodes.push_back(node);
            add_children(&child, level + 1);
        } else {
            continue; // no code below: its children are skipped
        }
        if (m_nodes.size() == at + 1 && m_nodes[at].range_count == 0) {
            m_nodes.pop_back(); // places no code and holds nothing that does
        } else {
            m_nodes[at].end = static_cast<uint32_t>(m_nodes.size());
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

} // namespace heapkit
