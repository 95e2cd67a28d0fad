// SPDX-License-Identifier: MIT
#include "heapkit/report/prefix_children.hpp"

#include <cstdint>
#include <doctest/doctest.h>
#include <vector>

using heapkit::PrefixChildren;

namespace {

// A prefix tree as ReportData keeps it, its children indexed as they are made.
struct Tree {
    std::vector<int32_t> parents; // -1 for a root
    std::vector<uint32_t> frames;
    PrefixChildren children;

    auto is_child(uint32_t parent, uint32_t frame) const {
        return [this, parent, frame](uint32_t node) {
            return frames[node] == frame && static_cast<uint32_t>(parents[node] + 1) == parent;
        };
    }
    // The child of `parent` (a node + 1, 0 for a root) of `frame`, made when new.
    uint32_t child(uint32_t parent, uint32_t frame) {
        size_t slot = 0;
        uint32_t node = children.find(parent, frame, is_child(parent, frame), slot);
        if (node == PrefixChildren::none) {
            node = static_cast<uint32_t>(frames.size());
            children.add(parent, frame, node, slot);
            parents.push_back(static_cast<int32_t>(parent) - 1);
            frames.push_back(frame);
        }
        return node;
    }
    uint32_t find(uint32_t parent, uint32_t frame) const {
        size_t slot = 0;
        return children.find(parent, frame, is_child(parent, frame), slot);
    }
};

} // namespace

TEST_CASE("heapkit::PrefixChildren finds each child by its parent and frame") {
    Tree tree;
    uint32_t main = tree.child(0, 7);
    uint32_t f = tree.child(main + 1, 3);
    uint32_t g = tree.child(main + 1, 4);
    uint32_t other_main = tree.child(f + 1, 7); // main's frame again, below f
    CHECK(tree.child(0, 7) == main);
    CHECK(tree.child(main + 1, 3) == f);
    CHECK(tree.child(main + 1, 4) == g);
    CHECK(tree.child(f + 1, 7) == other_main);
    CHECK(other_main != main);
    CHECK(tree.find(0, 3) == PrefixChildren::none);        // f is not a root
    CHECK(tree.find(g + 1, 3) == PrefixChildren::none);    // nor below g
    CHECK(tree.find(main + 1, 7) == PrefixChildren::none); // main is not below itself
    CHECK(tree.frames.size() == 4);
}

TEST_CASE("heapkit::PrefixChildren keeps every child through its growth and shared tags") {
    // 300 k keys, past many doublings: a slot's tag is half the key's hash, and seven
    // pairs of these keys share one (and so probe each other's slots): only the tree's
    // own parent and frame tell them apart.
    Tree tree;
    uint64_t state = 12345;
    auto next = [&state] {
        state = state * 6364136223846793005 + 1442695040888963407;
        return static_cast<uint32_t>(state >> 33);
    };
    std::vector<uint32_t> asked_parent;
    std::vector<uint32_t> asked_frame;
    std::vector<uint32_t> got;
    for (int i = 0; i < 300000; ++i) {
        auto parent =
            static_cast<uint32_t>(tree.frames.empty() ? 0 : next() % (tree.frames.size() + 1));
        uint32_t frame = next() % 50000;
        asked_parent.push_back(parent);
        asked_frame.push_back(frame);
        got.push_back(tree.child(parent, frame));
    }
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        uint32_t node = tree.find(asked_parent[i], asked_frame[i]);
        bool right = node == got[i] && tree.frames[node] == asked_frame[i] &&
                     static_cast<uint32_t>(tree.parents[node] + 1) == asked_parent[i];
        wrong += right ? 0 : 1;
    }
    CHECK(wrong == 0);
    // Every node is one key: none was made twice.
    CHECK(tree.frames.size() <= got.size());
    size_t made_again = 0;
    for (uint32_t n = 0; n < tree.frames.size(); ++n) {
        made_again +=
            tree.find(static_cast<uint32_t>(tree.parents[n] + 1), tree.frames[n]) == n ? 0 : 1;
    }
    CHECK(made_again == 0);
}
