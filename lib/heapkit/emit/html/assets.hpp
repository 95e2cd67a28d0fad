// SPDX-License-Identifier: MIT
// The HTML report's page, style and script: report.html, report.css and report.js of
// this folder, compiled in by embed_assets.py (meson runs it at build time).
#pragma once

#include <string_view>

namespace heapkit::html_assets {

extern const std::string_view page;   // report.html, with {{...}} slots the writer fills
extern const std::string_view style;  // report.css
extern const std::string_view script; // report.js

} // namespace heapkit::html_assets
