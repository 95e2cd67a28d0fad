// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/dwarf/unit_painting.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>

namespace heapkit {
namespace {

using Extents = std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>>; // [low, high) each

// Address spans, each with the path of DIEs (outermost first) painted there first: later
// paint covers what is still bare, and repaints what a shorter path of the same top
// function holds (descend()'s deepest chain among overlapping siblings).
class Canvas {
public:
    void paint(Dwarf_Addr low, Dwarf_Addr high, const std::vector<Dwarf_Die>& path) {
        auto next = m_spans.upper_bound(low);
        if (next != m_spans.begin() && std::prev(next)->second.high > low) {
            --next; // the span holding `low`
        }
        Dwarf_Addr cursor = low;
        while (cursor < high) { // spans are disjoint: next ends after cursor
            if (next == m_spans.end() || next->first >= high) {
                m_spans.emplace_hint(next, cursor, Span{high, path});
                break;
            }
            if (next->first > cursor) {
                m_spans.emplace_hint(next, cursor, Span{next->first, path});
                cursor = next->first;
                continue;
            }
            Dwarf_Addr end = std::min(high, next->second.high);
            next = deeper(path, next->second.path) ? repaint(next, cursor, end, path)
                                                   : std::next(next);
            cursor = end;
        }
    }

    template <typename Visit> void for_each(Visit&& visit) const {
        for (const auto& [low, span] : m_spans) {
            visit(low, span.high, span.path);
        }
    }

private:
    struct Span {
        Dwarf_Addr high;
        std::vector<Dwarf_Die> path;
    };
    using Spans = std::map<Dwarf_Addr, Span>; // by low

    static bool deeper(const std::vector<Dwarf_Die>& path, const std::vector<Dwarf_Die>& than) {
        return path.size() > than.size() && path.front().addr == than.front().addr;
    }

    // Gives [from, to) of the span at `at` (which holds it) `path`, the rest of the span
    // keeping its own; returns the span after [from, to).
    Spans::iterator repaint(Spans::iterator at, Dwarf_Addr from, Dwarf_Addr to,
                            const std::vector<Dwarf_Die>& path) {
        Span old = at->second;
        if (at->first < from) {
            at->second.high = from;
            at = m_spans.emplace_hint(std::next(at), from, Span{to, path});
        } else {
            at->second = Span{to, path};
        }
        auto after = std::next(at);
        if (to < old.high) {
            after = m_spans.emplace_hint(after, to, Span{old.high, std::move(old.path)});
        }
        return after;
    }

    Spans m_spans;
};

// The ranges of `ranges` within `clip`.
Extents ranges_within(std::span<const CodeTree::Range> ranges, const Extents& clip) {
    Extents inside;
    for (const auto& [low, high] : ranges) {
        for (const auto& [clip_low, clip_high] : clip) {
            Dwarf_Addr from = std::max(low, clip_low);
            Dwarf_Addr to = std::min(high, clip_high);
            if (from < to) {
                inside.emplace_back(from, to);
            }
        }
    }
    return inside;
}

// What descend() would find below node `parent` of `tree` for every address of `clip` at
// once: each child's subtree painted before the child itself and before its later
// siblings, so that for each address the first child in DIE order that holds it wins,
// and inside it the deepest scope, as descend() finds them. `path` is descend()'s,
// outermost first; `depth` too.
void paint_below(const CodeTree& tree, uint32_t parent, const Extents& clip,
                 std::vector<Dwarf_Die>& path, Canvas& canvas, int depth) {
    const std::vector<CodeTree::Node>& nodes = tree.nodes();
    if (depth > CodeTree::walk_levels) {
        return;
    }
    for (uint32_t i = parent + 1; i < nodes[parent].end; i = nodes[i].end) {
        const CodeTree::Node& child = nodes[i];
        if (child.kind == CodeTree::Kind::group) {
            paint_below(tree, i, clip, path, canvas, depth + 1);
            continue;
        }
        Extents inside;
        if (child.kind == CodeTree::Kind::code_scope) {
            inside = ranges_within(tree.ranges(child), clip);
        }
        if (inside.empty()) {
            continue;
        }
        if (child.is_function) {
            path.push_back(child.die);
        }
        paint_below(tree, i, inside, path, canvas, depth + 1);
        for (const auto& [low, high] : inside) {
            canvas.paint(low, high, path);
        }
        if (child.is_function) {
            path.pop_back();
        }
    }
}

// A function of the unit, as DwarfFrames::index_of() lists them: one per range.
struct TreeFunction {
    Dwarf_Addr low;
    Dwarf_Addr high; // exclusive
    uint32_t node;   // of the CodeTree
};

// The functions with code among the nodes [first, end) of `tree` (siblings) and through
// their groups, as collect_functions() (dwarf_frames.cpp) finds them, in DIE order.
void tree_functions(const CodeTree& tree, uint32_t first, uint32_t end,
                    std::vector<TreeFunction>& found) {
    const std::vector<CodeTree::Node>& nodes = tree.nodes();
    for (uint32_t i = first; i < end && nodes[i].level <= CodeTree::walk_levels; i = nodes[i].end) {
        if (nodes[i].holds_function) {
            for (const auto& [low, high] : tree.ranges(nodes[i])) {
                found.push_back({low, high, i});
            }
        } else if (nodes[i].kind == CodeTree::Kind::group) {
            tree_functions(tree, i + 1, nodes[i].end, found);
        }
    }
}

} // namespace

UnitPainting paint_unit(const CodeTree& tree) {
    std::vector<TreeFunction> functions;
    tree_functions(tree, 0, static_cast<uint32_t>(tree.nodes().size()), functions);
    std::stable_sort(functions.begin(), functions.end(),
                     [](const TreeFunction& a, const TreeFunction& b) { return a.low < b.low; });
    // DwarfFrames::function_chain() takes, of the functions holding an address, the last
    // in the index's order: painted first.
    Canvas canvas;
    for (size_t i = functions.size(); i-- > 0;) {
        const TreeFunction& function = functions[i];
        std::vector<Dwarf_Die> path{tree.nodes()[function.node].die};
        paint_below(tree, function.node, {{function.low, function.high}}, path, canvas, 1);
        canvas.paint(function.low, function.high, path);
    }
    UnitPainting painting;
    size_t spans = 0;
    size_t chains = 0;
    canvas.for_each([&](Dwarf_Addr, Dwarf_Addr, const std::vector<Dwarf_Die>& path) {
        ++spans;
        chains += path.size();
    });
    painting.spans.reserve(spans); // held to the end: no room to spare
    painting.chains.reserve(chains);
    std::unordered_map<const void*, uint32_t> ids; // by the DIE's bytes, as DwarfFrames keys
    canvas.for_each([&](Dwarf_Addr low, Dwarf_Addr high, const std::vector<Dwarf_Die>& path) {
        painting.spans.push_back({low, high, static_cast<uint32_t>(painting.chains.size()),
                                  static_cast<uint32_t>(path.size())});
        for (auto die = path.rbegin(); die != path.rend(); ++die) {
            auto [it, inserted] =
                ids.try_emplace(die->addr, static_cast<uint32_t>(painting.dies.size()));
            if (inserted) {
                painting.dies.push_back(*die);
            }
            painting.chains.push_back(it->second);
        }
    });
    painting.dies.shrink_to_fit();
    return painting;
}

} // namespace heapkit
