// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/answer_bounds.hpp"

#include "heapkit/symbolize/dwarf/dwarf_tags.hpp"

#include <elfutils/libdw.h>

namespace heapkit {
namespace {

using Extents = std::vector<std::pair<uint64_t, uint64_t>>;

void append_ranges(Dwarf_Die* die, Dwarf_Addr bias, std::vector<uint64_t>& bounds) {
    for_each_range(die, [&](Dwarf_Addr low, Dwarf_Addr high) {
        bounds.push_back(low + bias);
        bounds.push_back(high + bias);
    });
}

// The ranges of `tree`'s scopes within walk_levels of the unit: every function, inlined
// instance and block, and the scopes dwarf_getscopes visits besides.
void append_scopes(const CodeTree& tree, Dwarf_Addr bias, std::vector<uint64_t>& bounds,
                   Extents& scopes) {
    for (const CodeTree::Node& node : tree.nodes()) {
        if (node.kind == CodeTree::Kind::group || node.level > CodeTree::walk_levels) {
            continue;
        }
        for (const auto& [low, high] : tree.ranges(node)) {
            bounds.push_back(low + bias);
            bounds.push_back(high + bias);
            scopes.emplace_back(low + bias, high + bias);
        }
    }
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

void append_dwarf_bounds(Dwfl_Module* module, std::vector<uint64_t>& bounds, Extents& scopes,
                         const UnitVisitor& visit_unit, LinePositions* lines) {
    append_aranges(module, bounds);
    Dwarf_Addr bias = 0;
    CodeTree tree;
    for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(module, cu, &bias)) != nullptr;) {
        append_ranges(cu, bias, bounds);
        if (lines == nullptr || !lines->read(cu, bias, bounds)) {
            append_lines(cu, bias, bounds);
        }
        tree.read(cu);
        append_scopes(tree, bias, bounds, scopes);
        visit_unit(cu, tree);
    }
}

} // namespace heapkit
