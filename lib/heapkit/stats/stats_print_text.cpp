// SPDX-License-Identifier: MIT
#include "heapkit/stats/stats_print_text.hpp"

#include "heapkit/util/text.hpp"
#include "heapkit/util/try.hpp"

#include <charconv>
#include <optional>
#include <vector>

namespace heapkit::stats {
namespace {

constexpr std::string_view begin_marker = "___ Begin jemalloc statistics ___";
constexpr std::string_view end_marker = "--- End jemalloc statistics ---";

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> tokens;
    size_t at = 0;
    while (at < line.size()) {
        size_t start = line.find_first_not_of(" \t\r", at);
        if (start == std::string_view::npos) {
            break;
        }
        size_t end = line.find_first_of(" \t\r", start);
        end = end == std::string_view::npos ? line.size() : end;
        tokens.push_back(line.substr(start, end - start));
        at = end;
    }
    return tokens;
}

std::optional<uint64_t> number(std::string_view token) {
    uint64_t value = 0;
    auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error != std::errc() || end != token.data() + token.size()) {
        return std::nullopt;
    }
    return value;
}

// A decay time: milliseconds, or "N/A" (jemalloc prints it for -1: never by time).
std::optional<int64_t> decay_time(std::string_view token) {
    if (token == "N/A" || token == "-1") {
        return -1;
    }
    auto value = number(token);
    return value ? std::optional<int64_t>(static_cast<int64_t>(*value)) : std::nullopt;
}

std::string_view trim(std::string_view text) {
    size_t start = text.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) {
        return {};
    }
    return text.substr(start, text.find_last_not_of(" \t\r") - start + 1);
}

// The value after "label: " on a line that starts with the label, up to the first space
// or comma; "" when the line is not that label's.
std::string_view labelled(std::string_view line, std::string_view label) {
    line = trim(line);
    if (!line.starts_with(label) || line.size() == label.size() || line[label.size()] != ':') {
        return {};
    }
    std::string_view rest = trim(line.substr(label.size() + 1));
    return rest.substr(0, rest.find_first_of(" ,("));
}

// The run-time value of an option: "opt.x: a (y: b)" says b is in force now.
std::string_view in_force(std::string_view line) {
    size_t open = line.find('(');
    size_t close = line.rfind(')');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
        std::string_view inner = line.substr(open + 1, close - open - 1);
        size_t colon = inner.find(": ");
        if (colon != std::string_view::npos) {
            return trim(inner.substr(colon + 2));
        }
    }
    return {};
}

class TextReader {
public:
    TextReader(std::string_view text, std::string_view source)
        : m_lines(text)
        , m_source(source) {}

    Result<JemallocStats> read() {
        m_out.format = "text";
        bool ended = false;
        while (auto next = m_lines.next()) {
            m_line = *next;
            if (trim(m_line) == end_marker) {
                ended = true;
                break;
            }
            if (auto done = line(); !done) {
                return tl::unexpected(done.error());
            }
        }
        if (!ended) {
            return fail("{}: the statistics end early, before \"{}\" (truncated?)", m_source,
                        end_marker);
        }
        if (!m_totals) {
            return fail("{}: no \"Allocated: …\" line: this jemalloc prints no statistics "
                        "(built without --enable-stats?)",
                        m_source);
        }
        if (!m_chosen) {
            return fail("{}: neither \"Merged arenas stats:\" nor any \"arenas[N]:\" section",
                        m_source);
        }
        m_out.merged.pactive = m_active_bytes / m_out.page;
        return m_out;
    }

private:
    tl::unexpected<Error> bad(std::string_view what) const {
        return fail("{}:{}: {}", m_source, m_lines.line_number(), what);
    }

    Result<uint64_t> value_of(std::string_view token) const {
        auto value = number(token);
        if (!value) {
            return bad(fmt::format("expected a number, not \"{}\"", token));
        }
        return *value;
    }

    Result<void> line() {
        std::string_view text = trim(m_line);
        if (m_lines.line_number() == 1 && text != begin_marker) {
            return bad(fmt::format("not jemalloc statistics (expected \"{}\")", begin_marker));
        }
        if (text.starts_with("Version: ")) {
            std::string_view version = trim(text.substr(9));
            if (version.size() >= 2 && version.front() == '"' && version.back() == '"') {
                version = version.substr(1, version.size() - 2);
            }
            m_out.version = std::string(version);
            return {};
        }
        if (text.starts_with("config.stats: false")) {
            return bad("this jemalloc was built without statistics (config.stats: false; "
                       "configure --enable-stats): there are no figures to explain");
        }
        if (text.starts_with("opt.") || text.starts_with("Arenas:") ||
            text.starts_with("Page size:") || text.starts_with("Maximum thread-cached")) {
            return option(text);
        }
        if (text.starts_with("Allocated: ")) {
            return totals(text);
        }
        if (text == "Merged arenas stats:" || text.starts_with("arenas[") ||
            text == "Destroyed arenas stats:") {
            return section(text);
        }
        return m_in_chosen ? arena_line(text) : Result<void>{};
    }

    Result<void> option(std::string_view text) {
        auto set_bool = [&](std::string_view label, bool& target) {
            std::string_view value = labelled(text, label);
            if (value.empty()) {
                return;
            }
            std::string_view now = in_force(text);
            target = (now.empty() ? value : now) == "true";
        };
        set_bool("opt.retain", m_out.retain);
        set_bool("opt.tcache", m_out.tcache);
        set_bool("opt.prof", m_out.profiling);
        set_bool("opt.background_thread", m_out.background_thread);
        set_bool("opt.stats_print", m_out.printed_at_exit);
        auto set_decay = [&](std::string_view label, int64_t& target) -> Result<void> {
            std::string_view value = labelled(text, label);
            if (value.empty()) {
                return {};
            }
            std::string_view now = in_force(text);
            auto decay = decay_time(now.empty() ? value : now);
            if (!decay) {
                return bad(fmt::format("{}: expected milliseconds", label));
            }
            target = *decay;
            return {};
        };
        HEAPKIT_TRY(set_decay("opt.dirty_decay_ms", m_out.dirty_decay_ms));
        HEAPKIT_TRY(set_decay("opt.muzzy_decay_ms", m_out.muzzy_decay_ms));
        if (std::string_view value = labelled(text, "opt.narenas"); !value.empty()) {
            HEAPKIT_TRY_ASSIGN(uint64_t narenas, value_of(value));
            m_out.narenas_option = static_cast<int64_t>(narenas);
        }
        if (std::string_view value = labelled(text, "Arenas"); !value.empty()) {
            HEAPKIT_TRY_ASSIGN(m_out.narenas, value_of(value));
        }
        if (std::string_view value = labelled(text, "Page size"); !value.empty()) {
            HEAPKIT_TRY_ASSIGN(m_out.page, value_of(value));
            if (m_out.page == 0) {
                return bad("a page size of 0");
            }
        }
        if (std::string_view value = labelled(text, "Maximum thread-cached size class");
            !value.empty()) {
            HEAPKIT_TRY_ASSIGN(m_out.tcache_max, value_of(value));
        }
        return {};
    }

    // "Allocated: A, active: B, metadata: C (n_thp T), resident: D, mapped: E, retained: F"
    Result<void> totals(std::string_view text) {
        struct Field {
            std::string_view label;
            uint64_t* target;
        };
        for (Field field : {Field{"Allocated", &m_out.allocated}, Field{"active", &m_out.active},
                            Field{"metadata", &m_out.metadata}, Field{"resident", &m_out.resident},
                            Field{"mapped", &m_out.mapped}, Field{"retained", &m_out.retained}}) {
            size_t at = text.find(std::string(field.label) + ": ");
            if (at == std::string_view::npos) {
                return bad(fmt::format("the totals line has no \"{}:\"", field.label));
            }
            std::string_view rest = text.substr(at + field.label.size() + 2);
            HEAPKIT_TRY_ASSIGN(*field.target, value_of(rest.substr(0, rest.find_first_of(" ,"))));
        }
        m_totals = true;
        return {};
    }

    // Arena sections: the merge is read when printed (more than one arena in use), else
    // the first (and only) arena.
    Result<void> section(std::string_view text) {
        bool arena = text.starts_with("arenas[");
        m_out.arenas_in_use += arena ? 1 : 0;
        m_in_chosen = false;
        m_bin_columns.clear();
        m_large_table = false;
        if (text == "Merged arenas stats:" || (arena && !m_chosen)) {
            if (m_chosen && m_chosen_merged) {
                return {};
            }
            m_out.merged = ArenaStats{};
            m_active_bytes = 0;
            m_chosen = true;
            m_chosen_merged = !arena;
            m_in_chosen = true;
        }
        return {};
    }

    Result<void> arena_line(std::string_view text) {
        ArenaStats& arena = m_out.merged;
        std::vector<std::string_view> tokens = split(text);
        if (tokens.empty() || tokens[0] == "---") {
            return {};
        }
        if (tokens[0] == "bins:") {
            m_bin_columns.assign(tokens.begin() + 1, tokens.end());
            m_large_table = false;
            return {};
        }
        if (!m_bin_columns.empty() && number(tokens[0])) {
            return bin_row(tokens);
        }
        m_bin_columns.clear();
        if (tokens[0] == "large:" && tokens.size() > 1 && tokens[1] == "size") {
            m_large_table = true; // the large size classes' table: nothing needed from it
            return {};
        }
        if (m_large_table && number(tokens[0])) {
            return {};
        }
        m_large_table = false;
        struct Field {
            std::string_view label;
            uint64_t* target;
        };
        for (Field field :
             {Field{"assigned threads", &arena.threads}, Field{"active", &m_active_bytes},
              Field{"mapped", &arena.mapped}, Field{"retained", &arena.retained},
              Field{"base", &arena.base}, Field{"internal", &arena.internal},
              Field{"tcache_bytes", &arena.tcache_bytes}, Field{"resident", &arena.resident},
              Field{"small", &arena.small_allocated}, Field{"large", &arena.large_allocated}}) {
            if (std::string_view value = labelled(text, field.label); !value.empty()) {
                HEAPKIT_TRY_ASSIGN(*field.target, value_of(value));
                return {};
            }
        }
        // "dirty:  time  npages  sweeps  madvises  purged" under "decaying:"
        if ((tokens[0] == "dirty:" || tokens[0] == "muzzy:") && tokens.size() >= 3) {
            bool dirty = tokens[0] == "dirty:";
            auto decay = decay_time(tokens[1]);
            if (!decay) {
                return bad(fmt::format("expected a decay time, not \"{}\"", tokens[1]));
            }
            (dirty ? arena.dirty_decay_ms : arena.muzzy_decay_ms) = *decay;
            HEAPKIT_TRY_ASSIGN((dirty ? arena.pdirty : arena.pmuzzy), value_of(tokens[2]));
        }
        return {};
    }

    Result<void> bin_row(const std::vector<std::string_view>& tokens) {
        if (tokens.size() != m_bin_columns.size()) {
            return bad(fmt::format("a bins row of {} values under a header of {} columns",
                                   tokens.size(), m_bin_columns.size()));
        }
        auto column = [&](std::string_view name) -> Result<uint64_t> {
            for (size_t i = 0; i < m_bin_columns.size(); ++i) {
                if (m_bin_columns[i] == name) {
                    return value_of(tokens[i]);
                }
            }
            return bad(fmt::format("the bins table has no \"{}\" column", name));
        };
        BinStats bin;
        HEAPKIT_TRY_ASSIGN(bin.size, column("size"));
        HEAPKIT_TRY_ASSIGN(bin.regions, column("regs"));
        HEAPKIT_TRY_ASSIGN(uint64_t pages, column("pgs"));
        bin.slab_size = pages * m_out.page;
        HEAPKIT_TRY_ASSIGN(bin.curregs, column("curregs"));
        HEAPKIT_TRY_ASSIGN(bin.curslabs, column("curslabs"));
        if (auto nonfull = column("nonfull_slabs")) { // 5.2.1 on
            bin.nonfull_slabs = *nonfull;
        }
        m_out.merged.bins.push_back(bin);
        return {};
    }

    LineCursor m_lines;
    std::string_view m_source;
    std::string_view m_line; // the line being read
    JemallocStats m_out;
    bool m_totals = false;
    bool m_chosen = false;        // an arena section is being or has been read
    bool m_chosen_merged = false; // and it is the merge
    bool m_in_chosen = false;     // the current section is the one read
    uint64_t m_active_bytes = 0;
    std::vector<std::string_view> m_bin_columns; // inside the bins table: its header
    bool m_large_table = false;
};

} // namespace

bool is_stats_print_text(std::string_view text) {
    return trim(text.substr(0, text.find('\n'))) == begin_marker;
}

Result<JemallocStats> parse_stats_print_text(std::string_view text, std::string_view source) {
    return TextReader(text, source).read();
}

} // namespace heapkit::stats
