// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/svg.hpp"

#include "heapkit/emit/flame/colors.hpp"
#include "heapkit/emit/flame/labels.hpp"
#include "heapkit/emit/flame/script.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <iterator>

namespace heapkit {
namespace {

// Layout, in pixels.
constexpr double side_pad = 10;     // left and right of the frames
constexpr double top_pad = 36;      // above the frames: the title and buttons
constexpr double subtitle_pad = 18; // and a subtitle's line under the title, when there is one
constexpr double bottom_pad = 34;   // below: the details line
constexpr double frame_step = 16;   // from one level to the next
constexpr double frame_height = 15; // a frame's box; the rest is the gap between levels
constexpr double char_width = 7.2;  // an average character at 12px, to fit labels

// Collects the SVG text and passes it on a megabyte at a time. After the sink's first
// error nothing more is passed; finish() returns that error.
class SvgOut {
public:
    explicit SvgOut(const Sink& sink)
        : m_sink(sink) {}

    template <class... Args> void print(fmt::format_string<Args...> format, Args&&... args) {
        fmt::format_to(std::back_inserter(m_buffer), format, std::forward<Args>(args)...);
        flush_if_full();
    }
    Result<void> finish() {
        flush();
        return m_status;
    }

private:
    void flush_if_full() {
        if (m_buffer.size() >= (size_t{1} << 20)) {
            flush();
        }
    }
    void flush() {
        if (m_status && !m_buffer.empty()) {
            m_status = m_sink(m_buffer);
        }
        m_buffer.clear();
    }

    const Sink& m_sink;
    std::string m_buffer;
    Result<void> m_status;
};

std::string rgb(Rgb color) {
    return fmt::format("rgb({},{},{})", color.r, color.g, color.b);
}

// A frame as drawn: its node, its level (the root's is 0), and its left edge in counts
// from the root's.
struct Placed {
    uint32_t node;
    uint32_t depth;
    uint64_t offset;
};

// The frames of at least `min_value` in preorder, children sorted by name and
// left-aligned in their parent: what flame_script()'s zoom and search rely on.
std::vector<Placed> place_frames(const FlameGraph& graph, double min_value) {
    const PodVector<FlameNode>& nodes = graph.nodes();
    std::vector<Placed> placed;
    std::vector<Placed> pending{{0, 0, 0}};
    std::vector<uint32_t> children;
    while (!pending.empty()) {
        Placed frame = pending.back();
        pending.pop_back();
        placed.push_back(frame);
        children.clear();
        for (uint32_t c = nodes[frame.node].first_child; c != FlameNode::none;
             c = nodes[c].next_sibling) {
            if (nodes[c].value > 0 && static_cast<double>(nodes[c].value) >= min_value) {
                children.push_back(c);
            }
        }
        std::sort(children.begin(), children.end(), [&](uint32_t a, uint32_t b) {
            return graph.name(nodes[a]) < graph.name(nodes[b]);
        });
        uint64_t offset = frame.offset;
        size_t first = pending.size();
        for (uint32_t child : children) {
            pending.push_back({child, frame.depth + 1, offset});
            offset += nodes[child].value;
        }
        std::reverse(pending.begin() + static_cast<ptrdiff_t>(first), pending.end());
    }
    return placed;
}

// Counts below this are narrower than options.minwidth.
double min_value_of(const FlameOptions& options, uint64_t total) {
    double all = static_cast<double>(total);
    if (options.minwidth.percent) {
        return all * options.minwidth.value / 100;
    }
    return options.minwidth.value * all / (options.width - 2 * side_pad);
}

std::string frame_title(const FlameGraph& graph, uint32_t index, std::string_view unit,
                        const FlameDrawing& drawing) {
    const FlameNode& node = graph.nodes()[index];
    std::string note = drawing.note ? "; " + escape_xml(drawing.note(index)) : "";
    if (index == 0) {
        return fmt::format("all ({} {}, 100%{})", with_thousands(node.value), unit, note);
    }
    std::string title =
        fmt::format("{} ({} {}, {}%", escape_xml(display_name(graph.name(node))),
                    with_thousands(node.value), unit, percent_of(node.value, graph.total()));
    if (graph.differential()) {
        title += fmt::format("; {}{}%", node.delta > 0 ? "+" : "",
                             percent_of(node.delta, graph.total()));
    }
    title += note + ')';
    return title;
}

struct Canvas {
    double width;  // of the image
    double height; // of the image
    double scale;  // pixels per count
    bool inverted;
    double top; // above the frames: top_pad, and subtitle_pad with a subtitle

    // The x of a point `counts` from the root's left edge, rounded as written (so that
    // widths taken from rounded edges keep a child within its parent).
    double x_of(uint64_t counts) const {
        return std::round((side_pad + static_cast<double>(counts) * scale) * 10) / 10;
    }
    double top_of(uint32_t depth) const {
        return inverted ? top + depth * frame_step
                        : height - bottom_pad - (depth + 1) * frame_step + 1;
    }
};

void write_frame(SvgOut& out, const FlameGraph& graph, const Placed& frame, const Canvas& canvas,
                 const FlameOptions& options, std::string_view unit, const FlameDrawing& drawing) {
    const FlameNode& node = graph.nodes()[frame.node];
    double left = canvas.x_of(frame.offset);
    double right =
        frame.node == 0 ? canvas.width - side_pad : canvas.x_of(frame.offset + node.value);
    double top = canvas.top_of(frame.depth);
    std::string_view name = frame.node == 0 ? std::string_view("all") : graph.name(node);
    Rgb fill = drawing.fill           ? drawing.fill(frame.node)
               : graph.differential() ? change_color(node.delta, graph.max_line_delta())
                                      : frame_color(options.colors, name);
    std::string label =
        escape_xml(fitted_label(display_name(name), (right - left - 3) / char_width));
    out.print("<g><title>{}</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
              "fill=\"{}\"/><text x=\"{:.2f}\" y=\"{}\">{}</text></g>\n",
              frame_title(graph, frame.node, unit, drawing), left, top, right - left, frame_height,
              rgb(fill), left + 3, top + 10.5, label);
}

// The title (as XML text; `unit` is escaped already), with what the picture adds up to
// (without its total and unit the reader had to hover the root) and, for a differential
// graph, how to read it.
std::string title_of(const FlameOptions& options, const FlameGraph& graph, std::string_view unit) {
    std::string title = escape_xml(
        options.title.empty() ? std::string(options.inverted ? "Icicle Graph" : "Flame Graph")
                              : options.title);
    if (graph.differential()) {
        return fmt::format("{}: {} {} after; red grew, blue shrank, widths are the after values",
                           title, with_thousands(graph.total()), unit);
    }
    return fmt::format("{}: {} {} in all", title, with_thousands(graph.total()), unit);
}

// `left_out`: the details line's text while no frame is hovered (XML text).
void write_header(SvgOut& out, const Canvas& canvas, const FlameOptions& options,
                  const FlameDrawing& drawing, const std::string& title,
                  const std::string& left_out) {
    Background background = background_of(options.colors);
    if (drawing.nested_at) {
        out.print("<svg x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\">\n", *drawing.nested_at,
                  canvas.width, canvas.height);
    } else {
        out.print("<?xml version=\"1.0\" standalone=\"no\"?>\n"
                  "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                  "xmlns=\"http://www.w3.org/2000/svg\">\n",
                  canvas.width, canvas.height);
    }
    out.print("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
              "<stop offset=\"5%\" stop-color=\"{2}\"/><stop offset=\"95%\" stop-color=\"{3}\"/>"
              "</linearGradient></defs>\n"
              "<style type=\"text/css\"><![CDATA[{4}]]></style>\n"
              "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"url(#background)\"/>\n",
              canvas.width, canvas.height, rgb(background.top), rgb(background.bottom),
              flame_style());
    double text_line = canvas.height - bottom_pad / 2;
    if (!options.subtitle.empty()) {
        // Cut to the width, the whole of it in a tooltip: several stripped modules'
        // notes are longer than any image is wide.
        out.print(
            "<text id=\"subtitle\" x=\"{}\" y=\"{}\"><title>{}</title>{}</text>\n",
            canvas.width / 2, top_pad + 6, escape_xml(options.subtitle),
            escape_xml(fitted_label(options.subtitle, (canvas.width - 2 * side_pad) / char_width)));
    }
    out.print("<text id=\"title\" x=\"{}\" y=\"24\">{}</text>\n"
              "<text id=\"unzoom\" class=\"hidden\" x=\"{}\" y=\"24\">Reset Zoom</text>\n"
              "<text id=\"search\" x=\"{}\" y=\"24\">Search</text>\n"
              "<text id=\"details\" x=\"{}\" y=\"{}\">{}</text>\n"
              "<text id=\"matched\" x=\"{}\" y=\"{}\"> </text>\n",
              canvas.width / 2, title, side_pad, canvas.width - side_pad, side_pad, text_line,
              left_out, canvas.width - side_pad, text_line);
}

} // namespace

std::optional<MinWidth> parse_min_width(std::string_view text) {
    MinWidth width;
    if (!text.empty() && text.back() == '%') {
        width.percent = true;
        text.remove_suffix(1);
    }
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(text.data(), end, width.value);
    if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(width.value) ||
        width.value < 0) {
        return std::nullopt;
    }
    // Past 100 % every frame but the root is left out: a typo, not a picture.
    if (width.percent && width.value >= 100) {
        return std::nullopt;
    }
    return width;
}

namespace {

// The frames drawn and the image they make.
struct Layout {
    std::vector<Placed> frames;
    Canvas canvas;
};

Layout lay_out(const FlameGraph& graph, const FlameOptions& options) {
    uint64_t total = graph.total();
    // An empty profile draws as its root alone.
    std::vector<Placed> frames = total == 0 ? std::vector<Placed>{{0, 0, 0}}
                                            : place_frames(graph, min_value_of(options, total));
    uint32_t deepest = 0;
    for (const Placed& frame : frames) {
        deepest = std::max(deepest, frame.depth);
    }
    double top = top_pad + (options.subtitle.empty() ? 0 : subtitle_pad);
    Canvas canvas{static_cast<double>(options.width), (deepest + 1) * frame_step + top + bottom_pad,
                  total == 0 ? 0 : (options.width - 2 * side_pad) / static_cast<double>(total),
                  options.inverted, top};
    return {std::move(frames), canvas};
}

} // namespace

double flame_svg_height(const FlameGraph& graph, const FlameOptions& options) {
    return lay_out(graph, options).canvas.height;
}

Result<void> write_flame_svg(const FlameGraph& graph, const FlameOptions& options, const Sink& sink,
                             const FlameDrawing& drawing) {
    if (options.width < FlameOptions::min_width) {
        return fail("a flame graph must be at least {} pixels wide, not {}",
                    FlameOptions::min_width, options.width);
    }
    auto [frames, canvas] = lay_out(graph, options);
    std::string unit = escape_xml(options.countname.empty() ? "bytes" : options.countname);

    // Said on the image, not only in a comment: a reader should know the picture is not all.
    size_t all_frames = graph.nodes().size() + graph.dropped();
    std::string narrower = fmt::format("narrower than {}{}", options.minwidth.value,
                                       options.minwidth.percent ? "%" : " px");
    std::string left_out = frames.size() < all_frames
                               ? fmt::format("{} of {} frames {} not drawn",
                                             all_frames - frames.size(), all_frames, narrower)
                               : " ";
    SvgOut out(sink);
    write_header(out, canvas, options, drawing, title_of(options, graph, unit), left_out);
    out.print("<!-- {} of {} frames drawn; the others are {} -->\n", frames.size(), all_frames,
              narrower);
    out.print("<g id=\"frames\">\n");
    for (const Placed& frame : frames) {
        write_frame(out, graph, frame, canvas, options, unit, drawing);
    }
    out.print("</g>\n<script type=\"text/ecmascript\"><![CDATA[{}({{pad: {}, step: {}, "
              "charWidth: {}}});\n]]></script>\n</svg>\n",
              flame_script(), side_pad, frame_step, char_width);
    return out.finish();
}

double flame_min_share(const FlameOptions& options) {
    if (options.minwidth.percent) {
        return options.minwidth.value / 100;
    }
    if (options.width < FlameOptions::min_width) {
        return 0; // for a width write_flame_svg() refuses
    }
    return options.minwidth.value / (options.width - 2 * side_pad);
}

} // namespace heapkit
