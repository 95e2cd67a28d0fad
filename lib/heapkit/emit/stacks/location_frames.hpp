// SPDX-License-Identifier: MIT
// How write_folded spells a location's frames and where it cuts a stack: shared with the
// views that keep frames apart rather than as text (the HTML report), so that every view
// names the same functions and cuts the same allocator frames.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/emit/stacks/stack_lines.hpp"
#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace heapkit {

// A frame text as every view shows it: flamegraph.pl splits frames on ';' and the count
// off the last space, so a ';' inside a name is shown as ':'; control characters are
// escaped (terminal_safe) once, for all views.
std::string frame_label(std::string_view text);

// Each location's frame texts (innermost first) as tokens, spelled as `options.style`
// says, whether each is an allocator (or drop_frames) frame, and whether a standard
// library's (never with keep_allocator_frames). A location without a
// name, or every location in FrameStyle::address, has one entry: its address text;
// otherwise entry i is location.frames[i].
LocationTokens location_tokens(const Profile& profile, const FoldedOptions& options,
                               TokenTable& tokens);

// location_tokens without the texts (`tokens` left empty), for what needs only where
// stacks are cut: spelling every frame was most of the time pprof's drop_frames took.
LocationTokens location_kinds(const Profile& profile, const FoldedOptions& options);

// The frames cut from a stack's leaf end, counted leaf first: jeprof cuts the rootmost
// allocator (or drop_frames) frame and everything leafward (`allocator` frames); then
// the standard library's frames that follow (standard_frames.hpp), up to the first frame
// outside it, unless every frame left is the standard library's. Nothing is cut when
// `keep_allocator_frames`, unless drop_frames says so.
struct StackCut {
    uint32_t allocator = 0;
    uint32_t standard = 0;
};
StackCut stack_cut(const Profile& profile, const LocationTokens& layout,
                   std::span<const uint32_t> locations, bool keep_allocator_frames);

// How many of a stack's frames (`locations`, leaf first) are printed, counted from the
// root: all but stack_cut's.
uint32_t kept_frames(const Profile& profile, const LocationTokens& layout,
                     std::span<const uint32_t> locations, bool keep_allocator_frames);

} // namespace heapkit
