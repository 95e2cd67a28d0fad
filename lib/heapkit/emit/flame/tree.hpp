// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/flame/tables.hpp"
#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/pod_vector.hpp"
#include "heapkit/util/sink.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// How folded lines are read into a flame graph.
struct FlameInput {
    // Lines end in two counts, "stack before after" (difffolded.pl's format): widths are
    // the after counts, and each frame carries after - before of the stacks ending in it.
    bool differential = false;
    // Frames are merged from the leaf: each stack's frames are taken in reverse order.
    bool reverse = false;
    // The stacks come sorted bytewise (as write_folded writes them; reverse spoils it):
    // then frames holding less than `prune_below` of the total read so far are dropped as
    // soon as no later line can reach them (their value stays in their parent's), so that
    // memory follows the frames a drawing keeps, not the profile's. Input out of order is
    // an error.
    bool sorted = false;
    double prune_below = 0;               // a fraction of the total
    std::string source = "folded stacks"; // names the text in error messages
};

// One frame of the graph: one distinct path of frame names from the root. 32 bytes, as
// a million-stack profile makes millions of them.
struct FlameNode {
    static constexpr uint32_t none = UINT32_MAX;

    uint32_t parent;             // the root is its own parent
    uint32_t name;               // FlameGraph::name()
    uint32_t first_child = none; // children in no particular order
    uint32_t next_sibling = none;
    // The counts of the stacks through this frame, summed (with the frames dropped while
    // reading, see FlameInput::sorted: a frame's own count includes theirs).
    uint64_t value = 0;
    int64_t delta = 0; // differential: after - before of the stacks ending here
};

// The frame tree of a set of folded stacks: node 0 is the root ("all", every stack's
// value), and every node comes after its parent.
class FlameGraph {
public:
    const PodVector<FlameNode>& nodes() const { return m_nodes; }
    const FlameNode& root() const { return m_nodes[0]; }
    uint64_t total() const { return m_nodes[0].value; }
    // A frame's name as the lines spelled it (the root's is "").
    std::string_view name(const FlameNode& node) const { return m_names[node.name]; }
    std::string_view name(uint32_t id) const { return m_names[id]; }
    bool differential() const { return m_differential; }
    // Differential: the largest after - before of any line, in absolute value.
    uint64_t max_line_delta() const { return m_max_line_delta; }
    // Frames dropped while reading (see FlameInput::sorted): nodes() holds the others.
    uint64_t dropped() const { return m_dropped; }

private:
    friend class FlameGraphBuilder;

    PodVector<FlameNode> m_nodes;
    FlameNames m_names;
    bool m_differential = false;
    uint64_t m_max_line_delta = 0;
    uint64_t m_dropped = 0;
};

// Builds a FlameGraph from folded text fed in pieces of any size (a line may span
// pieces), so that it can be write_folded()'s sink and never needs the whole text.
//
// Stacks with the same frames merge into one path however the lines are ordered. The
// frames a line shares with the previous one are found by comparing bytes, and while the
// lines come sorted (as write_folded writes them) new frames need no lookup either: a
// million sorted stacks cost little more than reading them. Blank lines are skipped; any
// other line must be "frame;frame;... COUNT" (two counts when differential) with decimal
// counts, else feed() and finish() fail naming the line.
class FlameGraphBuilder {
public:
    explicit FlameGraphBuilder(FlameInput input = {});
    ~FlameGraphBuilder();
    FlameGraphBuilder(const FlameGraphBuilder&) = delete;
    FlameGraphBuilder& operator=(const FlameGraphBuilder&) = delete;

    Result<void> feed(std::string_view piece);
    // Adds one stack as values rather than text: `frames` root first, joined by ';';
    // `before` counts only in a differential graph.
    Result<void> add(std::string_view frames, uint64_t after, uint64_t before = 0);
    // Takes a last line without a newline, sums each frame's value from its children,
    // and hands over the graph; the builder is then spent.
    Result<FlameGraph> finish();

private:
    // A node of the previous line's path.
    struct Open {
        uint32_t node;
        bool made = false; // made in this run of lines, not returned to
        uint64_t run = 0;  // the counts of the lines through it in this run
    };

    Result<void> add_line(std::string_view line);
    Result<void> add_counted(std::string_view stack, uint64_t after, uint64_t before);
    Result<std::string_view> split_counts(std::string_view line, uint64_t& before,
                                          uint64_t& after) const;
    std::string_view reversed(std::string_view stack);
    Result<uint32_t> add_stack(std::string_view stack);
    size_t shared_frames(std::string_view stack, size_t common) const;
    bool returns(std::string_view stack, size_t start, size_t depth) const;
    bool returns_later(std::string_view stack, size_t start, size_t depth) const;
    void close_frames(size_t kept, bool may_return);
    void index_children();
    uint32_t child_of(uint32_t parent, std::string_view name, bool returning);
    uint32_t returned_to(uint32_t parent, uint32_t name_id) const;

    FlameInput m_input;
    FlameGraph m_graph;
    FlameNameIndex m_names{m_graph.m_names};
    std::unique_ptr<FlameChildIndex> m_children; // none while the input comes sorted
    std::string m_partial; // a line begun in one piece and ended in a later one
    size_t m_line_number = 0;
    std::string m_previous;     // the last line's stack, as added (reversed if asked)
    std::vector<size_t> m_ends; // where each of its frames ends in m_previous
    std::vector<Open> m_path;   // its nodes, root first: m_path[i + 1] is frame i
    std::string m_reversed;     // scratch for reversed()
    uint32_t m_first_new = 0;   // the first node made for the current line
};

// The graph of the folded text that `produce` writes to the sink it is given, read as
// `input` says (in pieces: the text is never held whole).
using FoldedProducer = std::function<Result<void>(const Sink&)>;
Result<FlameGraph> build_flame_graph(const FoldedProducer& produce, const FlameInput& input);

// The graph of the stacks that `produce` hands to the sink it is given (a profile's, from
// fold_stacks), with no text between: values below 0 are refused, as in text.
using StackProducer = std::function<Result<void>(const StackSink&)>;
Result<FlameGraph> build_flame_graph(const StackProducer& produce, const FlameInput& input);

} // namespace heapkit
