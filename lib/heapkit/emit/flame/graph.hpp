// SPDX-License-Identifier: MIT
// Flame graphs drawn from folded text; the profile's own are declared in heapkit.hpp.
#pragma once

#include "heapkit/emit/flame/tree.hpp"
#include "heapkit/emit/options.hpp"
#include "heapkit/util/sink.hpp"

namespace heapkit {

// How write_flame_graph reads folded text for `options`: reversed, differential, and
// pruned to what the drawing keeps while the lines come sorted.
FlameInput flame_input(const FlameOptions& options);

// Draws the folded text that `produce` writes to the sink it is given (in pieces, never
// held whole), read as `options` say, with write_flame_svg().
Result<void> write_flame_graph(const FoldedProducer& produce, const FlameOptions& options,
                               const Sink& sink);

} // namespace heapkit
