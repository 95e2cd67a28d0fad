// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/options.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace heapkit {

struct Rgb {
    uint8_t r;
    uint8_t g;
    uint8_t b;
};

// A frame's fill: picked within the palette by a hash of the name, so that a function has
// the same colour in every graph drawn from it.
Rgb frame_color(Palette palette, std::string_view name);

// A differential frame's fill: white when unchanged, redder the more it grew and bluer
// the more it shrank, relative to `largest` (the largest change in the graph).
Rgb change_color(int64_t delta, uint64_t largest);

// The background gradient behind the frames, top to bottom.
struct Background {
    Rgb top;
    Rgb bottom;
};
Background background_of(Palette palette);

} // namespace heapkit
