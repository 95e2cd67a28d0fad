// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/stacks/clone_names.hpp"
#include "heapkit/emit/stacks/dump_labels.hpp"
#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/emit/stacks/folded_text.hpp"
#include "heapkit/emit/stacks/location_frames.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/emit/stacks/stack_lines.hpp"
#include "heapkit/emit/stacks/standard_frames.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/model/address_text.hpp"
#include "heapkit/util/terminal_text.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <unordered_map>

namespace heapkit {

std::string frame_label(std::string_view text) {
    std::string label = terminal_safe(text);
    std::replace(label.begin(), label.end(), ';', ':');
    return label;
}

namespace {

std::string_view base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The function name a view shows, and matches drop_frames against.
std::string_view shown_name(const Frame& frame, const FoldedOptions& options) {
    return options.frames.merge_clones ? without_clone_suffixes(frame.name) : frame.name;
}

std::string frame_text(const Frame& frame, bool inlined, const FoldedOptions& options) {
    std::string text(shown_name(frame, options));
    if (options.style == FrameStyle::function_line && frame.line != 0 && !frame.file.empty()) {
        text += fmt::format(" ({}:{})", base_name(frame.file), frame.line);
    }
    if (inlined && options.annotate_inline) {
        text += "_[i]";
    }
    return frame_label(text);
}

} // namespace

namespace {

// Location `l`'s address token: location_address_text's text as frame_label shows it
// (token_table.hpp says why it is kept as a number). The prefix is labelled with a
// stand-in number after it, so that it is cut as frame_label cuts the whole text (the
// number is plain ASCII: it changes nothing before it); made once per module.
uint32_t address_token(const Profile& profile, uint32_t l, TokenTable& tokens) {
    const Location& location = profile.locations[l];
    if (!tokens.spells_module(location.module)) {
        if (location.module == no_module) {
            tokens.spell_module(no_module, tokens.intern_prefix(""), 0);
        } else {
            const Module& module = profile.modules[location.module];
            Location stand_in{module.start, {}, location.module, false};
            std::string text = frame_label(location_address_text(profile, stand_in));
            text.resize(text.rfind("0x"));
            tokens.spell_module(location.module, tokens.intern_prefix(std::move(text)),
                                module.start - module.file_offset);
        }
    }
    return tokens.add_address(l);
}

// Whether every location is shown by its address alone (LocationTokens::by_address).
bool all_by_address(const Profile& profile, const FoldedOptions& options) {
    return options.style == FrameStyle::address ||
           std::none_of(profile.locations.begin(), profile.locations.end(),
                        [](const Location& location) { return !location.frames.empty(); });
}

// location_tokens, or without texts when `tokens` is null.
LocationTokens layout_of(const Profile& profile, const FoldedOptions& options, TokenTable* tokens) {
    AllocatorFrameMatcher matcher(
        drop_frames_regex(options.frames.keep_allocator_frames, options.frames.drop_frames));
    // Whether a name is the standard library's, answered once per distinct name.
    bool keep_standard = !options.frames.keep_allocator_frames;
    std::unordered_map<std::string_view, bool> known; // names live in the profile
    auto is_standard = [&](std::string_view name) {
        auto it = known.find(name);
        return it != known.end()
                   ? it->second
                   : known.emplace(name, is_standard_library_function(name)).first->second;
    };
    LocationTokens all;
    all.by_address = all_by_address(profile, options);
    if (!all.by_address) {
        all.first.reserve(profile.locations.size() + 1);
    }
    for (uint32_t l = 0; l < profile.locations.size(); ++l) {
        const Location& location = profile.locations[l];
        if (!all.by_address) {
            all.first.push_back(static_cast<uint32_t>(all.allocator.size()));
        }
        if (location.frames.empty() || options.style == FrameStyle::address) {
            // drop_frames takes it by a name it has, or by the address text it shows.
            std::string text = !options.frames.drop_frames.empty()
                                   ? location_address_text(profile, location)
                                   : std::string();
            bool allocator = std::any_of(location.frames.begin(), location.frames.end(),
                                         [&](const Frame& f) {
                                             return matcher.matches(shown_name(f, options));
                                         }) ||
                             (!options.frames.drop_frames.empty() && matcher.matches(text));
            // The location is the standard library's when its function and everything
            // inlined into it are.
            bool standard =
                keep_standard && !location.frames.empty() &&
                std::all_of(location.frames.begin(), location.frames.end(),
                            [&](const Frame& f) { return is_standard(shown_name(f, options)); });
            if (tokens != nullptr) {
                uint32_t token = address_token(profile, l, *tokens);
                if (!all.by_address) {
                    all.tokens.push_back(token);
                }
            }
            all.allocator.push_back(allocator);
            all.standard.push_back(standard);
            continue;
        }
        // Every frame but the last is inlined into the next one.
        for (size_t f = 0; f < location.frames.size(); ++f) {
            const Frame& frame = location.frames[f];
            if (tokens != nullptr) {
                all.tokens.push_back(
                    tokens->intern(frame_text(frame, f + 1 < location.frames.size(), options)));
            }
            all.allocator.push_back(matcher.matches(shown_name(frame, options)));
            all.standard.push_back(keep_standard && is_standard(shown_name(frame, options)));
        }
    }
    if (!all.by_address) {
        all.first.push_back(static_cast<uint32_t>(all.allocator.size()));
    }
    return all;
}

} // namespace

// Each location's frame texts (innermost first) as tokens, and whether each is an
// allocator frame, or the standard library's.
LocationTokens location_tokens(const Profile& profile, const FoldedOptions& options,
                               TokenTable& tokens) {
    return layout_of(profile, options, &tokens);
}

LocationTokens location_kinds(const Profile& profile, const FoldedOptions& options) {
    return layout_of(profile, options, nullptr);
}

StackCut stack_cut(const Profile& profile, const LocationTokens& layout,
                   std::span<const uint32_t> locations, bool keep_allocator_frames) {
    size_t in_allocator = keep_allocator_frames ? 0 : allocator_module_prefix(profile, locations);
    uint32_t frames = 0;
    StackCut cut;
    for (size_t l = 0; l < locations.size(); ++l) {
        for (uint32_t t = layout.first_of(locations[l]); t < layout.end_of(locations[l]); ++t) {
            ++frames;
            if (l < in_allocator || layout.allocator[t]) {
                cut.allocator = frames;
            }
        }
    }
    // The standard library's run rootward of the allocator's frames (layout.standard is
    // all false when they are kept).
    uint32_t position = 0;
    for (uint32_t location : locations) {
        for (uint32_t t = layout.first_of(location); t < layout.end_of(location); ++t) {
            if (position++ < cut.allocator) {
                continue;
            }
            if (!layout.standard[t]) {
                return cut;
            }
            ++cut.standard;
        }
    }
    cut.standard = 0; // nothing but the standard library's left: it stays
    return cut;
}

uint32_t kept_frames(const Profile& profile, const LocationTokens& layout,
                     std::span<const uint32_t> locations, bool keep_allocator_frames) {
    uint32_t frames = 0;
    for (uint32_t location : locations) {
        frames += layout.end_of(location) - layout.first_of(location);
    }
    StackCut cut = stack_cut(profile, layout, locations, keep_allocator_frames);
    return frames - cut.allocator - cut.standard;
}

namespace {

int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

// Samples with the same locations and thread print the same line: one StackLine for
// each such group, values summed, so that each is cut and compared once.
PodVector<StackLine> group_samples(const Profile& profile, const FoldedOptions& options) {
    SampleGroups groups(profile, options.thread_frames, options.dump_frames);
    constexpr uint32_t ahead = 8;
    for (uint32_t s = 0; s < profile.samples.size(); ++s) {
        if (s + ahead < profile.samples.size()) {
            groups.prefetch(s + ahead);
        }
        if (int64_t value = value_of(profile, profile.samples[s], options.sample); value != 0) {
            groups.add(s, value);
        }
    }
    return groups.take();
}

// Sorts `lines` bytewise as spelled and merges lines that spell alike: different location
// lists can still print alike (inline frames, cut allocator frames, equal names).
void sort_and_merge(PodVector<StackLine>& lines, const LineSpeller& speller) {
    auto printed = std::remove_if(lines.begin(), lines.end(),
                                  [&](const StackLine& line) { return speller.empty(line); });
    lines.resize(static_cast<size_t>(printed - lines.begin()));
    speller.sort(std::span<StackLine>(lines.data(), lines.size()));
    size_t merged = 0;
    for (const StackLine& line : lines) {
        if (merged > 0 && speller.compare(lines[merged - 1], line) == 0) {
            lines[merged - 1].value = saturating_add(lines[merged - 1].value, line.value);
        } else {
            lines[merged++] = line;
        }
    }
    lines.resize(merged);
    auto nonzero = std::remove_if(lines.begin(), lines.end(),
                                  [](const StackLine& line) { return line.value == 0; });
    lines.resize(static_cast<size_t>(nonzero - lines.begin()));
}

// The tokens lines are spelled from, and the speller over them.
struct Spelling {
    explicit Spelling(const Profile& profile)
        : tokens(profile.locations) {}

    TokenTable tokens;
    LocationTokens layout;
    std::optional<LineSpeller> speller;
};

// Frame texts tokenized and ranked. Made before the lines: the ranking's scratch and
// the lines are then never in memory together (BENCHMARKS.md, issue 47).
void prepare(const Profile& profile, const FoldedOptions& options, Spelling& spelling) {
    spelling.layout = location_tokens(profile, options, spelling.tokens);
    std::vector<uint32_t> thread_tokens; // none: no thread frames
    if (options.thread_frames) {
        for (const std::string& label : profile.thread_labels) {
            thread_tokens.push_back(spelling.tokens.intern(frame_label(label)));
        }
    }
    std::vector<uint32_t> dump_tokens; // none: no dump frames
    if (options.dump_frames) {
        for (const std::string& label : dump_labels(profile.sources)) {
            dump_tokens.push_back(spelling.tokens.intern(frame_label(label)));
        }
    }
    spelling.speller.emplace(profile, spelling.layout, spelling.tokens, std::move(thread_tokens),
                             std::move(dump_tokens));
}

// Each line's allocator frames cut (its `kept` set).
void cut_lines(const Profile& profile, const FoldedOptions& options, const LocationTokens& layout,
               PodVector<StackLine>& lines) {
    for (StackLine& line : lines) {
        line.kept = kept_frames(profile, layout, profile.locations_of(profile.samples[line.sample]),
                                options.frames.keep_allocator_frames);
    }
}

// Lines are compared and spelled from token ids, never built as strings until they are
// handed over: for a million stacks, a string per stack (and a hash map of them) took
// more memory than the profile. Each line is spelled into one buffer, reused.
Result<void> fold_lines(const Profile& profile, const FoldedOptions& options,
                        const StackSink& sink) {
    Spelling spelling(profile);
    prepare(profile, options, spelling);
    PodVector<StackLine> lines = group_samples(profile, options);
    cut_lines(profile, options, spelling.layout, lines);
    const LineSpeller& speller = *spelling.speller;
    sort_and_merge(lines, speller);
    std::string frames;
    Result<void> written;
    speller.visit_ahead(std::span<const StackLine>(lines.data(), lines.size()),
                        LineSpeller::Reads::texts, [&](const StackLine& line) {
                            speller.spell(line, frames);
                            written = sink(FoldedStack{frames, line.value});
                            return written.has_value();
                        });
    return written;
}

Result<SampleStacks> spell_samples(const Profile& profile, const FoldedOptions& options) {
    SampleStacks spelled;
    spelled.stack_of_sample.assign(profile.samples.size(), SampleStacks::none);
    SampleGroups groups(profile, options.thread_frames);
    for (uint32_t s = 0; s < profile.samples.size(); ++s) {
        if (int64_t value = value_of(profile, profile.samples[s], options.sample); value != 0) {
            spelled.stack_of_sample[s] = groups.add(s, value);
        }
    }
    PodVector<StackLine> lines = groups.take();
    Spelling spelling(profile);
    prepare(profile, options, spelling);
    cut_lines(profile, options, spelling.layout, lines);
    std::vector<uint32_t> stack_of_line(lines.size(), SampleStacks::none);
    std::unordered_map<std::string, uint32_t> ids;
    std::string text;
    for (size_t l = 0; l < lines.size(); ++l) {
        if (spelling.speller->empty(lines[l])) {
            continue; // nothing left once the allocator frames are cut: no line
        }
        spelling.speller->spell(lines[l], text);
        auto [it, added] = ids.try_emplace(text, static_cast<uint32_t>(spelled.stacks.size()));
        if (added) {
            spelled.stacks.push_back(text);
        }
        stack_of_line[l] = it->second;
    }
    for (uint32_t& stack : spelled.stack_of_sample) {
        stack = stack == SampleStacks::none ? stack : stack_of_line[stack];
    }
    return spelled;
}

} // namespace

Result<SampleStacks> spell_sample_stacks(const Profile& profile, const FoldedOptions& options) {
    return catching([&] { return spell_samples(profile, options); });
}

Result<void> fold_stacks(const Profile& profile, const FoldedOptions& options,
                         const StackSink& sink) {
    return catching([&] { return fold_lines(profile, options, sink); });
}

// The output (often many times the dump's size: each line spells its stack out) goes to
// `sink` a buffer at a time, never held whole.
Result<void> write_folded(const Profile& profile, const FoldedOptions& options, const Sink& sink) {
    FoldedText text(sink);
    HEAPKIT_TRY(fold_stacks(profile, options, [&](const FoldedStack& stack) {
        return text.add(stack.frames, {stack.value});
    }));
    return text.finish();
}

Result<std::string> write_folded(const Profile& profile, const FoldedOptions& options) {
    std::string out;
    HEAPKIT_TRY(write_folded(profile, options, [&](std::string_view piece) {
        out += piece;
        return Result<void>{};
    }));
    return out;
}

} // namespace heapkit
