// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/sample_type.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit {

// What one frame of a collapsed stack says.
enum class FrameStyle {
    function,      // "name"
    function_line, // "name (file.c:12)"
    address,       // "module+0xOFFSET", one frame per address (inline chains not expanded)
};

std::optional<FrameStyle> parse_frame_style(std::string_view text);

struct FoldedOptions {
    SampleType sample = SampleType::inuse_space;
    bool keep_allocator_frames = false;
    bool thread_frames = false; // prefix each stack with its thread's label
    FrameStyle style = FrameStyle::function;
    bool annotate_inline = false; // suffix inlined frames with "_[i]" (flamegraph.pl's mark)
};

// Collapsed stacks as flamegraph.pl reads them: one line per distinct stack,
// root first, frames joined by ';', a space, the integer value. Identical stacks are
// summed, zero totals left out, lines sorted bytewise so the output is deterministic.
// Allocator frames are cut as jeprof cuts them: the rootmost match and all leafward.
//
// The output goes to `sink` in pieces of about a megabyte; the first error it returns
// stops the writing and is returned.
using FoldedSink = std::function<Result<void>(std::string_view)>;
Result<void> write_folded(const Profile& profile, const FoldedOptions& options,
                          const FoldedSink& sink);
// The same output as one string.
std::string write_folded(const Profile& profile, const FoldedOptions& options);

} // namespace heapkit
