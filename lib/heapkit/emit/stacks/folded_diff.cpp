// SPDX-License-Identifier: MIT
// write_folded_diff (heapkit.hpp): difffolded.pl's two-column lines from two profiles.
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <charconv>

namespace heapkit {
namespace {

struct Line {
    std::string_view stack;
    std::string_view value; // decimal digits, as write_folded spelled them
};

// write_folded's output split into its lines, by stack.
std::vector<Line> lines_of(std::string_view text) {
    std::vector<Line> lines;
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        size_t space = line.rfind(' ');
        lines.push_back({line.substr(0, space), line.substr(space + 1)});
    }
    // write_folded sorts whole lines; ordering by the stack alone makes the merge exact.
    std::sort(lines.begin(), lines.end(),
              [](const Line& a, const Line& b) { return a.stack < b.stack; });
    return lines;
}

} // namespace

// Both sides are spelled whole first: a diff is of two profiles a user holds side by side,
// and merging spelled stacks is what makes addresses of two runs (ASLR) meet by name.
Result<void> write_folded_diff(const Profile& before, const Profile& after,
                               const FoldedOptions& options, const Sink& sink) {
    HEAPKIT_TRY_ASSIGN(std::string before_text, write_folded(before, options));
    HEAPKIT_TRY_ASSIGN(std::string after_text, write_folded(after, options));
    return catching([&]() -> Result<void> {
        std::vector<Line> old_lines = lines_of(before_text);
        std::vector<Line> new_lines = lines_of(after_text);
        std::string out;
        auto emit = [&](std::string_view stack, std::string_view was, std::string_view is) {
            out.append(stack).append(" ").append(was).append(" ").append(is).append("\n");
        };
        size_t o = 0;
        size_t n = 0;
        while (o < old_lines.size() || n < new_lines.size()) {
            if (n == new_lines.size() ||
                (o < old_lines.size() && old_lines[o].stack < new_lines[n].stack)) {
                emit(old_lines[o].stack, old_lines[o].value, "0");
                ++o;
            } else if (o == old_lines.size() || new_lines[n].stack < old_lines[o].stack) {
                emit(new_lines[n].stack, "0", new_lines[n].value);
                ++n;
            } else {
                emit(new_lines[n].stack, old_lines[o].value, new_lines[n].value);
                ++o;
                ++n;
            }
            if (out.size() >= (size_t{1} << 20)) {
                HEAPKIT_TRY(sink(out));
                out.clear();
            }
        }
        return out.empty() ? Result<void>{} : sink(out);
    });
}

} // namespace heapkit
