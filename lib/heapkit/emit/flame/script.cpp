// SPDX-License-Identifier: MIT
// flame_style and flame_script (script.hpp): flame.css, and emit/js's files wrapped into
// the one function expression the SVG calls, so that nothing they declare is left in the
// document's global scope (a graph may be nested in another image with scripts of its own).
#include "heapkit/emit/flame/script.hpp"

#include "heapkit/emit/assets.hpp"

#include <string>

namespace heapkit {

std::string_view flame_style() {
    return assets::flame_style;
}

std::string_view flame_script() {
    static const std::string script = "(function (layout) {\n" + std::string(assets::flame_script) +
                                      "interactiveFlameGraph(layout);\n})";
    return script;
}

} // namespace heapkit
