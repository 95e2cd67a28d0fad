// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace heapkit {

// What makes a flame graph SVG interactive, for svg.cpp to embed (flame.css and emit/js/'s
// files, compiled in by embed_assets.py): no file or network is needed to view the graph.
//
// The style sheet, for a <style> element's CDATA section.
std::string_view flame_style();

// The script, for a <script> element's CDATA section placed after the frames: a function
// expression that takes the layout, {pad, step, charWidth} (frame_layout_js()'s object).
// It relies on what write_flame_svg() promises: the frames are the <g> children of
// #frames, in the tree's preorder (root first), each holding a <title> "NAME (N UNIT,
// ...", a <rect> and a <text>; the buttons are #unzoom, #search, #details and #matched.
//
// In the page: hovering a frame shows its title; clicking a frame zooms into it (its
// ancestors stay, dimmed, and zoom back out when clicked); "Reset Zoom" or Escape undo;
// Ctrl-F, F3 or "Search" ask for a regular expression, colour the frames whose name
// matches, and show the matched share of the frame zoomed into. window.heapkitFlame
// offers zoom(frame), search(regex), resetZoom() and resetSearch() to scripts.
std::string_view flame_script();

} // namespace heapkit
