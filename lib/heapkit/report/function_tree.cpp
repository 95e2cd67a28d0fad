// SPDX-License-Identifier: MIT
#include "heapkit/report/function_tree.hpp"

#include "heapkit/report/prefix_children.hpp"

namespace heapkit {
namespace {

// The merged nodes in the order first met (parents first): node 0 is the root.
struct Merged {
    std::vector<uint32_t> parent{0};
    std::vector<uint32_t> name{0};
    std::vector<uint32_t> of_node; // per prefix-tree node: its merged node
};

// Most merged nodes have one callee (a stack's frames below where it parts from the
// others): its name is compared directly, and only a node's second callee puts the node's
// callees in the hash index, where the rest are looked up.
Merged merge_by_name(std::span<const int32_t> parents, std::span<const uint32_t> names) {
    constexpr uint32_t none = PrefixChildren::none;
    Merged m;
    m.parent.reserve(parents.size() + 1);
    m.name.reserve(parents.size() + 1);
    m.of_node.resize(parents.size());
    std::vector<uint32_t> only_child{none}; // per merged node: its callee while it has one
    std::vector<bool> indexed{false};       // per merged node: its callees in `children`
    only_child.reserve(parents.size() + 1);
    indexed.reserve(parents.size() + 1);
    PrefixChildren children; // keyed by (merged parent, name), read back from `m`
    for (size_t n = 0; n < parents.size(); ++n) {
        uint32_t parent = parents[n] < 0 ? 0 : m.of_node[static_cast<size_t>(parents[n])];
        uint32_t name = names[n];
        uint32_t node = none;
        size_t slot = PrefixChildren::no_slot;
        if (indexed[parent]) {
            auto is_child = [&](uint32_t kid) {
                return m.name[kid] == name && m.parent[kid] == parent;
            };
            node = children.find(parent, name, is_child, slot);
        } else if (only_child[parent] != none && m.name[only_child[parent]] == name) {
            node = only_child[parent];
        }
        if (node == none) {
            node = static_cast<uint32_t>(m.parent.size());
            m.parent.push_back(parent);
            m.name.push_back(name);
            only_child.push_back(none);
            indexed.push_back(false);
            if (indexed[parent]) {
                children.add(parent, name, node, slot);
            } else if (only_child[parent] == none) {
                only_child[parent] = node;
            } else {
                children.add(parent, m.name[only_child[parent]], only_child[parent]);
                children.add(parent, name, node);
                indexed[parent] = true;
            }
        }
        m.of_node[n] = node;
    }
    return m;
}

// Each merged node's callees, in string id order: the nodes bucketed by name first (a
// counting sort), then placed per parent in that order. Callees of node n are
// kids[first[n]] to kids[first[n + 1] - 1]. The names are let go of once sorted: at most
// four numbers a node are held at once.
struct Callees {
    std::vector<uint32_t> first;
    std::vector<uint32_t> kids;
};
Callees callees_by_name(Merged& m, size_t string_count) {
    size_t count = m.parent.size();
    std::vector<uint32_t> ordered(count);
    {
        std::vector<uint32_t> by_name(string_count + 1);
        for (size_t n = 1; n < count; ++n) {
            ++by_name[m.name[n] + 1];
        }
        for (size_t s = 0; s < string_count; ++s) {
            by_name[s + 1] += by_name[s];
        }
        for (size_t n = 1; n < count; ++n) {
            ordered[by_name[m.name[n]]++] = static_cast<uint32_t>(n);
        }
    }
    m.name = {};
    // first[n] counts up to the end of n's callees, then each callee, taken in reverse
    // name order, is put just before its parent's end: the ends become the starts.
    Callees c{std::vector<uint32_t>(count + 1), std::vector<uint32_t>(count)};
    for (size_t n = 1; n < count; ++n) {
        ++c.first[m.parent[n]];
    }
    for (size_t n = 0; n < count; ++n) {
        c.first[n + 1] += c.first[n];
    }
    for (size_t i = count - 1; i-- > 0;) {
        uint32_t n = ordered[i];
        c.kids[--c.first[m.parent[n]]] = n;
    }
    return c;
}

// Each merged node's depth-first number (the root: 0), callees in the order given: a
// walk down with one position a level, so that nothing a node is kept beyond the numbers
// (the writer's peak is here on a million stacks).
std::vector<uint32_t> depth_first_numbers(const Callees& c) {
    std::vector<uint32_t> number(c.kids.size());
    uint32_t next = 1;
    std::vector<uint32_t> path{0};        // the nodes walked down through
    std::vector<uint32_t> at{c.first[0]}; // per level: its next callee's place in kids
    while (!path.empty()) {
        uint32_t k = at.back();
        if (k == c.first[path.back() + 1]) {
            path.pop_back();
            at.pop_back();
            continue;
        }
        ++at.back();
        uint32_t kid = c.kids[k];
        number[kid] = next++;
        path.push_back(kid);
        at.push_back(c.first[kid]);
    }
    return number;
}

} // namespace

std::vector<int32_t> function_tree_steps(std::span<const int32_t> parents,
                                         std::vector<uint32_t> names, size_t string_count) {
    Merged m = merge_by_name(parents, names);
    names = {};
    std::vector<uint32_t> number;
    {
        Callees c = callees_by_name(m, string_count);
        number = depth_first_numbers(c);
    }
    std::vector<int32_t> steps(parents.size());
    for (size_t n = 0; n < parents.size(); ++n) {
        uint32_t node = m.of_node[n];
        steps[n] = static_cast<int32_t>(number[node] - number[m.parent[node]]);
    }
    return steps;
}

} // namespace heapkit
