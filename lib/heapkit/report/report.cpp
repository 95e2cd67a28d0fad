// SPDX-License-Identifier: MIT
// write_html_report and write_html_series (report.hpp): the data, then the page around it.
#include "heapkit/report/report.hpp"

#include "heapkit/emit/assets.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/allocation_sites.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/report/report_data.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace heapkit {
namespace {

constexpr SampleType all_types[] = {
    SampleType::inuse_space,   SampleType::inuse_objects,      SampleType::alloc_space,
    SampleType::alloc_objects, SampleType::temporary_space,    SampleType::temporary_objects,
    SampleType::byte_seconds,  SampleType::cross_thread_space, SampleType::cross_thread_objects,
};

// The types every one of `profiles` has, the one asked for among them.
Result<std::vector<SampleType>> types_of(std::span<const Profile* const> profiles,
                                         SampleType wanted) {
    std::vector<SampleType> types;
    for (SampleType type : all_types) {
        bool everywhere = std::all_of(profiles.begin(), profiles.end(), [&](const Profile* p) {
            return check_sample_type(*p, type).has_value();
        });
        if (everywhere) {
            types.push_back(type);
        }
    }
    if (std::find(types.begin(), types.end(), wanted) == types.end()) {
        HEAPKIT_TRY(check_sample_type(*profiles.front(), wanted));
        for (const Profile* profile : profiles) {
            HEAPKIT_TRY(check_sample_type(*profile, wanted));
        }
    }
    return types;
}

void append_strings(std::string& out, std::string_view member,
                    const std::vector<std::string>& texts) {
    fmt::format_to(std::back_inserter(out), "\"{}\":[", member);
    for (size_t i = 0; i < texts.size(); ++i) {
        if (i > 0) {
            out.push_back(',');
        }
        append_json_string(out, texts[i]);
    }
    out += "],\n";
}

// What every page's data begins with: its kind, title, types and what was filtered.
// The types are named as `named` names them (a pprof's own names).
std::string head_json(std::string_view kind, const Profile& named,
                      const std::vector<SampleType>& types, SampleType wanted,
                      const HtmlOptions& options, const std::vector<std::string>& sources) {
    std::string out = fmt::format("{{\"version\":1,\"kind\":\"{}\",\n\"title\":", kind);
    append_json_string(out, options.title);
    out += ",\n\"types\":[";
    for (size_t t = 0; t < types.size(); ++t) {
        out += t > 0 ? "," : "";
        fmt::format_to(std::back_inserter(out), "{{\"name\":\"{}\",\"unit\":\"{}\"}}",
                       sample_name(named, types[t]), sample_unit(named, types[t]));
    }
    auto chosen = std::find(types.begin(), types.end(), wanted) - types.begin();
    fmt::format_to(std::back_inserter(out), "],\n\"type\":{},\n", chosen);
    append_strings(out, "applied", options.applied);
    append_strings(out, "sources", sources);
    if (options.capture) {
        fmt::format_to(std::back_inserter(out),
                       "\"capture\":{{\"unixMillis\":{},\"pid\":{},\"program\":",
                       options.capture->unix_millis, options.capture->pid);
        append_json_string(out, options.capture->program);
        out += "},\n";
    }
    return out;
}

std::string base64(std::string_view bytes) {
    static constexpr char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4 + bytes.size() / 57 + 1);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t chunk = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        size_t left = std::min<size_t>(3, bytes.size() - i);
        if (left > 1) {
            chunk |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        }
        if (left > 2) {
            chunk |= static_cast<unsigned char>(bytes[i + 2]);
        }
        out.push_back(digits[chunk >> 18 & 63]);
        out.push_back(digits[chunk >> 12 & 63]);
        out.push_back(left > 1 ? digits[chunk >> 6 & 63] : '=');
        out.push_back(left > 2 ? digits[chunk & 63] : '=');
        if (i % 57 == 54) {
            out.push_back('\n'); // lines of 76 characters
        }
    }
    return out;
}

// The page with its slots filled: the title, what is drawn ahead of the data (`first`),
// the style, the script, the data. The data, JSON, a NUL, and from the next multiple of 8
// bytes the numeric tables (`bytes`, which the JSON's "binary" locates), goes in gzipped
// and in base64 (the page unpacks it with the browser's DecompressionStream and reads the
// tables as typed arrays in place), so that a report stays within a few times the size of
// the gzipped pprof of the same dump.
Result<void> write_page(const std::string& title, const FirstPaint& first, std::string json,
                        std::string bytes, const Sink& sink) {
    json.push_back('\0');
    json.resize((json.size() + 7) & ~size_t{7});
    // Level 2: a quarter of level 6's time on a million stacks, 15 % larger.
    const std::string_view pieces[] = {json, bytes};
    std::string zipped = gzip(pieces, 2);
    json = {}; // let go of before the base64 is made: a big report's peak
    bytes = {};
    std::string data = base64(zipped);
    zipped = {};
    std::string_view page = assets::report_page;
    std::string escaped_title;
    append_html_text(escaped_title, title);
    struct Slot {
        std::string_view name;
        std::string_view text;
    };
    const Slot slots[] = {{"{{TITLE}}", escaped_title},
                          {"{{SOURCES}}", first.sources},
                          {"{{TYPES}}", first.types},
                          {"{{TOTAL}}", first.total},
                          {"{{TOP_NOTE}}", first.top_note},
                          {"{{TOP_HEAD}}", first.top_head},
                          {"{{TOP_ROWS}}", first.top_rows},
                          {"{{STYLE}}", assets::report_style},
                          {"{{SCRIPT}}", assets::report_script},
                          {"{{DATA}}", data}};
    while (!page.empty()) {
        size_t open = page.find("{{");
        if (open == std::string_view::npos) {
            return sink(page);
        }
        HEAPKIT_TRY(sink(page.substr(0, open)));
        page.remove_prefix(open);
        const Slot* slot = std::find_if(std::begin(slots), std::end(slots),
                                        [&](const Slot& s) { return page.starts_with(s.name); });
        if (slot == std::end(slots)) {
            return fail("report.html: unknown slot at {}", page.substr(0, 20));
        }
        HEAPKIT_TRY(sink(slot->text));
        page.remove_prefix(slot->name.size());
    }
    return {};
}

// What follows a path's last '/'.
std::string file_name_of(std::string_view path) {
    return std::string(path.substr(path.rfind('/') + 1));
}

// "heapkit: PROGRAM (DUMP)": the program's name and the dump's file name, not the paths,
// which may be a temporary directory gone by the time the page is read or kept.
std::string title_of(const HtmlOptions& options, const std::vector<Module>& modules,
                     const std::vector<std::string>& sources) {
    if (!options.title.empty()) {
        return options.title;
    }
    std::string dumps = sources.empty() ? "profile" : file_name_of(sources.front());
    if (sources.size() > 1) {
        dumps += fmt::format(" and {} more", sources.size() - 1);
    }
    auto main = std::find_if(modules.begin(), modules.end(),
                             [](const Module& module) { return module.is_main; });
    if (main == modules.end()) {
        return "heapkit: " + dumps;
    }
    return fmt::format("heapkit: {} ({})", file_name_of(main->path), dumps);
}

// files() of report_page.js: "a, b, c", or "a, ... (N more), z" past three.
std::string files_text(const std::vector<std::string>& list) {
    if (list.size() > 3) {
        return fmt::format("{}, ... ({} more), {}", list.front(), list.size() - 2, list.back());
    }
    return fmt::format("{}", fmt::join(list, ", "));
}

// The sample type chooser's options, `chosen` selected.
std::string type_options(const Profile& named, const std::vector<SampleType>& types,
                         SampleType chosen) {
    std::string out;
    for (size_t t = 0; t < types.size(); ++t) {
        fmt::format_to(std::back_inserter(out), "<option value=\"{}\"{}>", t,
                       types[t] == chosen ? " selected" : "");
        append_html_text(out, sample_name(named, types[t]));
        out += "</option>";
    }
    return out;
}

// What a profile's page draws before its data is read (first_paint.hpp): Top's first rows
// of the chosen type, the total, the dumps read. A live page's header (its capture) and a
// change's and a series' Top are drawn once the data is read.
FirstPaint first_paint_of(const Profile& profile, const ReportData& data,
                          const std::vector<SampleType>& types, SampleType chosen,
                          const HtmlOptions& options) {
    auto type = static_cast<size_t>(std::find(types.begin(), types.end(), chosen) - types.begin());
    TopTable table = data.top_table(type, top_rows_shown);
    FirstPaint first = first_paint(table, data.strings(), sample_name(profile, chosen),
                                   sample_unit(profile, chosen) == "bytes");
    if (!options.capture) {
        std::string sources = files_text(profile.sources);
        if (!profile.notes.empty()) {
            sources += fmt::format(" \u2014 {}", fmt::join(profile.notes, " "));
        }
        append_html_text(first.sources, sources);
    }
    first.types = type_options(profile, types, chosen);
    return first;
}

// An allocation log's table per site and its lifetime chart, as --text and --lifetimes
// write them: "logTable" (text) and "lifetimeSvg" (an SVG document).
Result<void> append_log_views(std::string& json, const Profile& profile,
                              const FoldedOptions& folded) {
    std::string table;
    std::string chart;
    auto into = [](std::string& out) {
        return [&out](std::string_view piece) {
            out += piece;
            return Result<void>{};
        };
    };
    HEAPKIT_TRY(write_log_report(profile, folded, TextOptions{}, into(table)));
    HEAPKIT_TRY(write_lifetime_chart(profile, folded, LifetimeOptions{}, into(chart)));
    json += "\"logTable\":";
    append_json_string(json, table);
    json += ",\n\"lifetimeSvg\":";
    append_json_string(json, chart);
    json += ",\n";
    return {};
}

Result<void> write_report(Profile& profile, Profile* base, const FoldedOptions& folded,
                          HtmlOptions options, const Sink& sink) {
    std::vector<const Profile*> profiles{&profile};
    if (base) {
        profiles.push_back(base);
    }
    HEAPKIT_TRY_ASSIGN(std::vector<SampleType> types, types_of(profiles, folded.sample));
    options.title = title_of(options, profile.modules, profile.sources);
    std::string json = head_json(base ? "diff" : "profile", profile, types, folded.sample, options,
                                 profile.sources);
    if (base) {
        append_strings(json, "baseSources", base->sources);
    }
    append_strings(json, "notes", profile.notes);
    if (profile.from_log) {
        HEAPKIT_TRY(append_log_views(json, profile, folded));
    }
    FirstPaint first;
    std::string bytes;
    { // the tables let go of once written: the page is made at the writer's peak
        ReportData data(folded);
        if (base) {
            HEAPKIT_TRY(data.add_profile_releasing(*base, types));
        }
        HEAPKIT_TRY(data.add_profile_releasing(profile, types));
        data.release_indexes();
        if (base) {
            first.types = type_options(profile, types, folded.sample);
        } else {
            first = first_paint_of(profile, data, types, folded.sample, options);
        }
        std::move(data).write_json(json, bytes, options.source_excerpts);
    }
    json += "}";
    return write_page(options.title, first, std::move(json), std::move(bytes), sink);
}

// JSON has no infinities nor NaN.
double finite(double value) {
    return std::isfinite(value) ? value : 0;
}

// The suspects of write_growth_report, each with its stack's frames as string ids.
Result<void> append_series(std::string& json, std::span<const Profile> dumps,
                           const FoldedOptions& folded, const GrowthOptions& growth,
                           ReportData& data) {
    HEAPKIT_TRY_ASSIGN(GrowthSeries series, follow_stacks(dumps, folded));
    size_t shown = suspect_count(series, growth.node_count);
    std::span<const StackTrend> top(series.stacks.data(), shown);
    HEAPKIT_TRY_ASSIGN(std::vector<std::string> sites, allocation_sites(dumps, folded, top));
    json += fmt::format("\"series\":{{\"timed\":{},\"ranked\":\"{}\",\"seconds\":[{}],",
                        series.timed, name_of(folded), fmt::join(series.seconds, ","));
    json += fmt::format("\"bounds\":[{}],\"suspects\":[", fmt::join(series.bounds, ","));
    for (size_t s = 0; s < shown; ++s) {
        const StackTrend& stack = top[s];
        std::vector<uint32_t> frames;
        std::string_view rest = stack.stack;
        while (!rest.empty()) {
            size_t semicolon = rest.find(';');
            frames.push_back(data.intern(rest.substr(0, semicolon)));
            rest = semicolon == std::string_view::npos ? "" : rest.substr(semicolon + 1);
        }
        json += s > 0 ? ",\n" : "\n";
        json += fmt::format("{{\"growth\":{},\"slope\":{},\"r2\":{},\"monotonic\":{},"
                            "\"values\":[{}],\"frames\":[{}],\"site\":",
                            finite(stack.trend.persistent()), finite(stack.trend.slope),
                            finite(stack.trend.r_squared), stack.trend.monotonic,
                            fmt::join(stack.values, ","), fmt::join(frames, ","));
        append_json_string(json, sites[s]);
        json += "}";
    }
    json += "]},\n";
    return {};
}

Result<void> write_series(std::span<const Profile> dumps, const FoldedOptions& folded,
                          const GrowthOptions& growth, HtmlOptions options, const Sink& sink) {
    std::vector<const Profile*> profiles;
    std::vector<std::string> sources;
    for (const Profile& dump : dumps) {
        profiles.push_back(&dump);
        sources.push_back(dump.sources.empty() ? "" : dump.sources.front());
    }
    if (profiles.empty()) {
        return fail("a series needs dumps");
    }
    HEAPKIT_TRY_ASSIGN(std::vector<SampleType> types, types_of(profiles, folded.sample));
    options.title = title_of(options, dumps.front().modules, sources);
    std::string json =
        head_json("series", *profiles.front(), types, folded.sample, options, sources);
    append_strings(json, "notes", dumps.back().notes);
    std::string bytes;
    { // the tables let go of once written: the page is made at the writer's peak
        ReportData data(folded);
        for (const Profile& dump : dumps) {
            HEAPKIT_TRY(data.add_profile(dump, types));
        }
        data.release_indexes();
        HEAPKIT_TRY(append_series(json, dumps, folded, growth, data));
        std::move(data).write_json(json, bytes,
                                   options.source_excerpts); // after the suspects' strings
    }
    json += "}";
    FirstPaint first;
    first.types = type_options(*profiles.front(), types, folded.sample);
    return write_page(options.title, first, std::move(json), std::move(bytes), sink);
}

} // namespace

Result<void> write_html_report(Profile profile, std::optional<Profile> base,
                               const FoldedOptions& folded, const HtmlOptions& options,
                               const Sink& sink) {
    return catching(
        [&] { return write_report(profile, base ? &*base : nullptr, folded, options, sink); });
}

Result<void> write_html_series(std::span<const Profile> dumps, const FoldedOptions& folded,
                               const GrowthOptions& growth, const HtmlOptions& options,
                               const Sink& sink) {
    return catching([&] { return write_series(dumps, folded, growth, options, sink); });
}

} // namespace heapkit
