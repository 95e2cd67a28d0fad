// SPDX-License-Identifier: MIT
#include "heapkit/report/function_tree.hpp"

#include "heapkit/emit/flame/tables.hpp"

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
    constexpr uint32_t none = FlameChildIndex::none;
    Merged m;
    m.parent.reserve(parents.size() + 1);
    m.name.reserve(parents.size() + 1);
    m.of_node.resize(parents.size());
    std::vector<uint32_t> only_child{none}; // per merged node: its callee while it has one
    std::vector<bool> indexed{false};       // per merged node: its callees in `children`
    only_child.reserve(parents.size() + 1);
    indexed.reserve(parents.size() + 1);
    FlameChildIndex children;
    for (size_t n = 0; n < parents.size(); ++n) {
        uint32_t parent = parents[n] < 0 ? 0 : m.of_node[static_cast<size_t>(parents[n])];
        uint32_t name = names[n];
        uint32_t node = none;
        size_t slot = FlameChildIndex::no_slot;
        if (indexed[parent]) {
            node = children.find(parent, name, slot);
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

// Each merged node's depth-first number, callees in string id order: children listed
// per parent (bucketed by name first, so each list comes in name order), and each
// child numbered after its parent and its elder siblings' subtrees.
std::vector<uint32_t> depth_first_numbers(const Merged& m, size_t string_count) {
    size_t count = m.parent.size();
    std::vector<uint32_t> by_name(string_count + 1);
    for (size_t n = 1; n < count; ++n) {
        ++by_name[m.name[n] + 1];
    }
    for (size_t s = 0; s < string_count; ++s) {
        by_name[s + 1] += by_name[s];
    }
    std::vector<uint32_t> ordered(count);
    for (size_t n = 1; n < count; ++n) {
        ordered[by_name[m.name[n]]++] = static_cast<uint32_t>(n);
    }
    std::vector<uint32_t> first(count + 1);
    for (size_t n = 1; n < count; ++n) {
        ++first[m.parent[n] + 1];
    }
    for (size_t n = 0; n < count; ++n) {
        first[n + 1] += first[n];
    }
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    std::vector<uint32_t> kids(count);
    for (size_t i = 0; i + 1 < count; ++i) {
        uint32_t n = ordered[i];
        kids[fill[m.parent[n]]++] = n;
    }
    std::vector<uint32_t> size(count, 1); // children come after their parents: sum back
    for (size_t n = count; n-- > 1;) {
        size[m.parent[n]] += size[n];
    }
    std::vector<uint32_t> number(count); // the root: 0
    for (size_t n = 0; n < count; ++n) {
        uint32_t next = number[n] + 1;
        for (uint32_t k = first[n]; k < first[n + 1]; ++k) {
            number[kids[k]] = next;
            next += size[kids[k]];
        }
    }
    return number;
}

} // namespace

std::vector<int32_t> function_tree_steps(std::span<const int32_t> parents,
                                         std::span<const uint32_t> names, size_t string_count) {
    Merged m = merge_by_name(parents, names);
    std::vector<uint32_t> number = depth_first_numbers(m, string_count);
    std::vector<int32_t> steps(parents.size());
    for (size_t n = 0; n < parents.size(); ++n) {
        uint32_t node = m.of_node[n];
        steps[n] = static_cast<int32_t>(number[node] - number[m.parent[node]]);
    }
    return steps;
}

} // namespace heapkit
