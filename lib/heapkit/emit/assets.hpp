// SPDX-License-Identifier: MIT
// The pages' markup, style and scripts, files of report/, emit/js/ and emit/flame/
// compiled in by embed_assets.py (meson runs it at build time; lib/heapkit/meson.build
// lists which files make which asset, in order).
#pragma once

#include <string_view>

namespace heapkit::assets {

// The HTML report (report/report.cpp).
extern const std::string_view report_page;   // report.html, with {{...}} slots the writer fills
extern const std::string_view report_style;  // report.css
extern const std::string_view report_script; // emit/js's shared files, then report_*.js

// The SVG flame graph (emit/flame/script.cpp).
extern const std::string_view flame_style;  // flame.css
extern const std::string_view flame_script; // emit/js's shared files, then flame_svg.js

} // namespace heapkit::assets
