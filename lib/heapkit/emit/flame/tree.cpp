// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/tree.hpp"

#include "heapkit/util/text.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace heapkit {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) {
        return sum;
    }
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// after - before, saturated to int64.
int64_t difference(uint64_t before, uint64_t after) {
    constexpr uint64_t max = std::numeric_limits<int64_t>::max();
    if (after >= before) {
        return static_cast<int64_t>(std::min(after - before, max));
    }
    return -static_cast<int64_t>(std::min(before - after, max));
}

// flamegraph.pl's split drops empty frames at the end, so a trailing ';' adds none.
std::string_view without_trailing_separators(std::string_view stack) {
    while (!stack.empty() && stack.back() == ';') {
        stack.remove_suffix(1);
    }
    return stack;
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

} // namespace

FlameGraphBuilder::FlameGraphBuilder(FlameInput input)
    : m_input(std::move(input)) {
    m_graph.m_differential = m_input.differential;
    m_graph.m_nodes.push_back(FlameNode{0, m_names.intern("")});
    m_path.push_back(Open{0});
}

FlameGraphBuilder::~FlameGraphBuilder() = default;

Result<void> FlameGraphBuilder::feed(std::string_view piece) {
    if (!m_partial.empty()) {
        size_t newline = piece.find('\n');
        m_partial.append(piece.substr(0, newline));
        if (newline == std::string_view::npos) {
            return {};
        }
        std::string line = std::move(m_partial);
        m_partial.clear();
        if (auto ok = add_line(line); !ok) {
            return ok;
        }
        piece.remove_prefix(newline + 1);
    }
    while (!piece.empty()) {
        const void* found = std::memchr(piece.data(), '\n', piece.size());
        if (found == nullptr) {
            m_partial.assign(piece);
            break;
        }
        auto length = static_cast<size_t>(static_cast<const char*>(found) - piece.data());
        if (auto ok = add_line(piece.substr(0, length)); !ok) {
            return ok;
        }
        piece.remove_prefix(length + 1);
    }
    return {};
}

Result<FlameGraph> FlameGraphBuilder::finish() {
    if (!m_partial.empty()) {
        std::string line = std::move(m_partial);
        m_partial.clear();
        if (auto ok = add_line(line); !ok) {
            return tl::unexpected(ok.error());
        }
    }
    // Children come after their parents: one pass from the last node sums each
    // node's value into its parent's.
    PodVector<FlameNode>& nodes = m_graph.m_nodes;
    for (size_t n = nodes.size() - 1; n > 0; --n) {
        nodes[nodes[n].parent].value = saturating_add(nodes[nodes[n].parent].value, nodes[n].value);
    }
    m_children.reset();
    return std::move(m_graph);
}

// "stack COUNT" or "stack BEFORE AFTER": the counts, and the stack. As flamegraph.pl
// reads them, the counts are the last whitespace-separated fields and the stack is all
// before the space in front of them, whatever else it holds.
Result<std::string_view> FlameGraphBuilder::split_counts(std::string_view line, uint64_t& before,
                                                         uint64_t& after) const {
    auto take_count = [&](uint64_t& count) {
        size_t digits = line.size();
        while (digits > 0 && line[digits - 1] >= '0' && line[digits - 1] <= '9') {
            --digits;
        }
        std::string_view text = line.substr(digits);
        auto value = take_decimal(text);
        if (!value || digits == 0 || !is_space(line[digits - 1])) {
            return false;
        }
        count = *value;
        line = line.substr(0, digits - 1);
        return true;
    };
    if (!take_count(after) || (m_input.differential && !take_count(before))) {
        return fail("{}:{}: expected \"{}\"", m_input.source, m_line_number,
                    m_input.differential ? "frame;frame;... BEFORE AFTER"
                                         : "frame;frame;... COUNT");
    }
    return without_trailing_separators(line);
}

Result<void> FlameGraphBuilder::add_line(std::string_view line) {
    ++m_line_number;
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    if (std::all_of(line.begin(), line.end(), is_space)) {
        return {};
    }
    uint64_t before = 0;
    uint64_t after = 0;
    HEAPKIT_TRY_ASSIGN(std::string_view stack, split_counts(line, before, after));
    return add_counted(stack, after, before);
}

Result<void> FlameGraphBuilder::add(std::string_view frames, uint64_t after, uint64_t before) {
    ++m_line_number;
    return add_counted(without_trailing_separators(frames), after, before);
}

Result<void> FlameGraphBuilder::add_counted(std::string_view stack, uint64_t after,
                                            uint64_t before) {
    // Node and name ids are 32 bits (a node is 32 bytes: that many would take 128 GiB).
    if (m_graph.m_nodes.size() + stack.size() >= FlameNode::none) {
        return fail("{}:{}: too many frames for a flame graph", m_input.source, m_line_number);
    }
    auto leaf = add_stack(m_input.reverse ? reversed(stack) : stack);
    if (!leaf) {
        return tl::unexpected(leaf.error());
    }
    FlameNode& node = m_graph.m_nodes[*leaf];
    node.value = saturating_add(node.value, after); // the stack's own count, summed up later
    for (Open& open : m_path) {
        open.run = saturating_add(open.run, after);
    }
    if (m_input.differential) {
        int64_t delta = difference(before, after);
        node.delta = saturating_add(node.delta, delta);
        uint64_t size = delta < 0 ? 0 - static_cast<uint64_t>(delta) : static_cast<uint64_t>(delta);
        m_graph.m_max_line_delta = std::max(m_graph.m_max_line_delta, size);
    }
    return {};
}

// The frames of `stack` in reverse order, joined by ';'.
std::string_view FlameGraphBuilder::reversed(std::string_view stack) {
    m_reversed.clear();
    size_t end = stack.size();
    while (true) {
        size_t semicolon = end == 0 ? std::string_view::npos : stack.rfind(';', end - 1);
        size_t start = semicolon == std::string_view::npos ? 0 : semicolon + 1;
        m_reversed.append(stack.substr(start, end - start));
        if (semicolon == std::string_view::npos) {
            return without_trailing_separators(m_reversed);
        }
        m_reversed.push_back(';');
        end = semicolon;
    }
}

// The leaf node of `stack` (the root for an empty one), adding the nodes it lacks. The
// frames it shares with the previous line are that line's nodes: found by comparing bytes.
//
// Where it parts from the previous line, its frame may be a child its parent already has
// (one seen some lines before): the child index answers that. But while the stacks come
// sorted bytewise, as write_folded writes them, the lines through a parent's child N are
// consecutive, save one case: siblings N + c..., c a byte below ';' ("f(int)" between the
// lines through "f"), sort in between, and the frame after them returns to N, a proper
// prefix of the frame before it. So until the input leaves that order, nodes are made
// without lookups and the index is not kept (most of a big profile's cost here was cache
// misses in it), and a returning frame is looked for among its parent's children.
Result<uint32_t> FlameGraphBuilder::add_stack(std::string_view stack) {
    size_t common = static_cast<size_t>(
        std::mismatch(stack.begin(), stack.end(), m_previous.begin(), m_previous.end()).first -
        stack.begin());
    bool ascending = common == m_previous.size() ||
                     (common < stack.size() && static_cast<unsigned char>(stack[common]) >
                                                   static_cast<unsigned char>(m_previous[common]));
    if (!ascending && m_input.sorted) {
        return fail("{}:{}: stacks out of order: expected them sorted bytewise", m_input.source,
                    m_line_number);
    }
    if (!ascending && !m_children) {
        index_children();
    }
    size_t shared = shared_frames(stack, common);
    size_t start = shared == 0 ? 0 : m_ends[shared - 1] + 1;
    bool returning = !m_children && returns(stack, start, shared);
    close_frames(shared + 1, !m_children && returns_later(stack, start, shared));
    m_ends.resize(shared);
    m_first_new = static_cast<uint32_t>(m_graph.m_nodes.size());
    while (!stack.empty() && start <= stack.size()) {
        size_t end = std::min(stack.find(';', start), stack.size());
        uint32_t node = child_of(m_path.back().node, stack.substr(start, end - start), returning);
        m_path.push_back(Open{node, node >= m_first_new});
        m_ends.push_back(end);
        start = end + 1;
        returning = false; // the frames below a returning one are new: see child_of()
    }
    m_previous.assign(stack);
    return m_path.back().node;
}

// How many of the previous line's frames `stack` shares, given the bytes they share:
// frame i is shared when its bytes and the separator (or end) after them are.
size_t FlameGraphBuilder::shared_frames(std::string_view stack, size_t common) const {
    if (stack.empty()) {
        return 0; // no frames at all: the root
    }
    size_t shared = 0;
    while (shared < m_ends.size() &&
           (m_ends[shared] < common ||
            (m_ends[shared] == common && (common == stack.size() || stack[common] == ';')))) {
        ++shared;
    }
    return shared;
}

// Whether the frame of `stack` at `start` (frame number `depth`) is a proper prefix of the
// previous line's frame there: the one case where sorted input returns to a child.
bool FlameGraphBuilder::returns(std::string_view stack, size_t start, size_t depth) const {
    if (depth >= m_ends.size() || start > stack.size()) {
        return false;
    }
    std::string_view name = stack.substr(start, stack.find(';', start) - start);
    std::string_view before(m_previous.data() + start, m_ends[depth] - start);
    return before.size() > name.size() && before.substr(0, name.size()) == name;
}

// Whether a later line may return to the previous line's frame number `depth`, which the
// frame of `stack` at `start` replaces: when that frame extends its name with a byte
// below ';' (the frames in between must all start with the name).
bool FlameGraphBuilder::returns_later(std::string_view stack, size_t start, size_t depth) const {
    if (depth >= m_ends.size() || start > stack.size()) {
        return false;
    }
    std::string_view name = stack.substr(start, stack.find(';', start) - start);
    std::string_view before(m_previous.data() + start, m_ends[depth] - start);
    return name.size() > before.size() && name.substr(0, before.size()) == before &&
           static_cast<unsigned char>(name[before.size()]) < ';';
}

// Closes the previous line's frames past the first `kept` of its path, deepest first. In
// sorted input a closed frame is never reached again, unless `may_return` (for the
// shallowest); one made in this run holding less than FlameInput::prune_below is dropped
// with its subtree, which are the last nodes made, and its value goes to its parent's own.
void FlameGraphBuilder::close_frames(size_t kept, bool may_return) {
    PodVector<FlameNode>& nodes = m_graph.m_nodes;
    double below = m_input.prune_below * static_cast<double>(m_path[0].run);
    while (m_path.size() > kept) {
        Open frame = m_path.back();
        m_path.pop_back();
        bool returnable = may_return && m_path.size() == kept;
        if (m_input.sorted && frame.made && !returnable && static_cast<double>(frame.run) < below) {
            FlameNode& parent = nodes[m_path.back().node];
            parent.first_child = nodes[frame.node].next_sibling;
            parent.value = saturating_add(parent.value, frame.run);
            m_graph.m_dropped += nodes.size() - frame.node;
            nodes.resize(frame.node);
        }
    }
}

// From here on every new frame is looked up: every node so far goes in the index.
void FlameGraphBuilder::index_children() {
    m_children = std::make_unique<FlameChildIndex>();
    const PodVector<FlameNode>& nodes = m_graph.m_nodes;
    for (uint32_t n = 1; n < nodes.size(); ++n) {
        m_children->add(nodes[n].parent, nodes[n].name, n);
    }
}

// The child of `parent` named `name`, made when there is none. A node made for this line
// has no child yet; while the input is sorted only a `returning` frame can be one seen
// before (and the frames below it are new: its children's lines all sort after the
// sibling it returns from).
uint32_t FlameGraphBuilder::child_of(uint32_t parent, std::string_view name, bool returning) {
    uint32_t name_id = m_names.intern(name);
    if (returning) {
        if (uint32_t child = returned_to(parent, name_id); child != FlameNode::none) {
            return child;
        }
    }
    size_t slot = FlameChildIndex::no_slot;
    PodVector<FlameNode>& nodes = m_graph.m_nodes;
    if (m_children && parent < m_first_new) {
        uint32_t child = m_children->find(parent, name_id, slot);
        if (child != FlameNode::none) {
            return child;
        }
    }
    auto child = static_cast<uint32_t>(nodes.size());
    FlameNode node{parent, name_id};
    node.next_sibling = nodes[parent].first_child;
    nodes[parent].first_child = child;
    nodes.push_back(node);
    if (m_children) {
        m_children->add(parent, name_id, child, slot);
    }
    return child;
}

// The child of `parent` named `name_id` when it has one. The input being sorted, the
// siblings made after it all start with its name (their lines sort between), and the
// newest come first in the list: the walk stops at the first sibling that does not.
// (Each sibling is walked past at most once for each prefix of its name, so the walks
// cost no more than reading the names.)
uint32_t FlameGraphBuilder::returned_to(uint32_t parent, uint32_t name_id) const {
    const PodVector<FlameNode>& nodes = m_graph.m_nodes;
    std::string_view name = m_graph.name(name_id);
    for (uint32_t c = nodes[parent].first_child; c != FlameNode::none; c = nodes[c].next_sibling) {
        if (nodes[c].name == name_id) {
            return c;
        }
        if (m_graph.name(nodes[c]).substr(0, name.size()) != name) {
            break;
        }
    }
    return FlameNode::none;
}

Result<FlameGraph> build_flame_graph(const FoldedProducer& produce, const FlameInput& input) {
    FlameGraphBuilder builder(input);
    HEAPKIT_TRY(produce([&](std::string_view piece) { return builder.feed(piece); }));
    return builder.finish();
}

Result<FlameGraph> build_flame_graph(const StackProducer& produce, const FlameInput& input) {
    FlameGraphBuilder builder(input);
    HEAPKIT_TRY(produce([&](const FoldedStack& stack) -> Result<void> {
        if (stack.value < 0 || stack.before < 0) {
            return fail("{}: {} has a negative value, which a flame graph cannot draw",
                        input.source, stack.frames);
        }
        return builder.add(stack.frames, static_cast<uint64_t>(stack.value),
                           static_cast<uint64_t>(stack.before));
    }));
    return builder.finish();
}

} // namespace heapkit
