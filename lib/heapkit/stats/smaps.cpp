// SPDX-License-Identifier: MIT
#include "heapkit/stats/smaps.hpp"

#include "heapkit/util/text.hpp"

#include <charconv>

namespace heapkit::stats {
namespace {

// One mapping's header: "start-end perms offset dev inode [path]".
struct Mapping {
    uint64_t start = 0;
    uint64_t end = 0;
    std::string_view perms;
    std::string_view path;
    uint64_t inode = 0;
    uint64_t rss = 0;       // bytes
    uint64_t anonymous = 0; // bytes
};

std::string_view next_token(std::string_view& text) {
    size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) {
        text = {};
        return {};
    }
    size_t end = text.find(' ', start);
    end = end == std::string_view::npos ? text.size() : end;
    std::string_view token = text.substr(start, end - start);
    text = text.substr(end);
    return token;
}

bool parse_number(std::string_view token, uint64_t& value, int base = 10) {
    auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value, base);
    return error == std::errc() && end == token.data() + token.size() && !token.empty();
}

bool parse_header(std::string_view line, Mapping& mapping) {
    std::string_view range = next_token(line);
    size_t dash = range.find('-');
    mapping = Mapping{};
    if (dash == std::string_view::npos || !parse_number(range.substr(0, dash), mapping.start, 16) ||
        !parse_number(range.substr(dash + 1), mapping.end, 16)) {
        return false;
    }
    mapping.perms = next_token(line);
    next_token(line); // offset
    next_token(line); // device
    if (mapping.perms.size() != 4 || !parse_number(next_token(line), mapping.inode)) {
        return false;
    }
    size_t path = line.find_first_not_of(' ');
    mapping.path = path == std::string_view::npos ? std::string_view() : line.substr(path);
    return true;
}

bool anonymous_private(const Mapping& mapping) {
    return mapping.inode == 0 && mapping.perms[3] == 'p' &&
           (mapping.path.empty() || mapping.path == "[stack]");
}

// glibc puts a thread's guard page (no access) directly below its stack.
bool is_stack(const Mapping& mapping, const Mapping* below) {
    if (mapping.path == "[stack]") {
        return true;
    }
    return anonymous_private(mapping) && mapping.perms.starts_with("rw") && below != nullptr &&
           below->end == mapping.start && below->perms.starts_with("---") &&
           anonymous_private(*below);
}

class SmapsReader {
public:
    SmapsReader(std::string_view text, std::string_view source)
        : m_text(text)
        , m_source(source) {}

    Result<ResidentMemory> read() {
        LineCursor lines(m_text);
        while (auto line = lines.next()) {
            if (line->empty()) {
                continue;
            }
            if (auto done = take(*line, lines.line_number()); !done) {
                return tl::unexpected(done.error());
            }
        }
        if (!m_open) {
            return fail("{}: no mapping (expected /proc/PID/smaps or smaps_rollup)", m_source);
        }
        close_mapping();
        m_out.file = m_out.rss > m_out.anonymous ? m_out.rss - m_out.anonymous : 0;
        m_out.per_mapping = !m_rollup;
        return m_out;
    }

private:
    Result<void> take(std::string_view line, size_t number) {
        std::string_view rest = line;
        std::string_view first = next_token(rest);
        if (!first.ends_with(':')) {
            Mapping mapping;
            if (!parse_header(line, mapping)) {
                return fail("{}:{}: expected a mapping (start-end perms offset dev inode path) "
                            "or a \"Name: value\" line",
                            m_source, number);
            }
            if (m_open) {
                close_mapping();
            }
            m_rollup = m_rollup || mapping.path == "[rollup]";
            m_current = mapping;
            m_open = true;
            ++m_out.mappings;
            return {};
        }
        if (!m_open) {
            return fail("{}:{}: \"{}\" before any mapping", m_source, number, first);
        }
        uint64_t* target = first == "Rss:"         ? &m_current.rss
                           : first == "Anonymous:" ? &m_current.anonymous
                                                   : nullptr;
        if (target == nullptr) {
            return {};
        }
        uint64_t kilobytes = 0;
        if (!parse_number(next_token(rest), kilobytes) || next_token(rest) != "kB") {
            return fail("{}:{}: expected \"{} N kB\"", m_source, number, first);
        }
        *target = kilobytes * 1024;
        return {};
    }

    void close_mapping() {
        m_out.rss += m_current.rss;
        m_out.anonymous += m_current.anonymous;
        if (is_stack(m_current, m_has_below ? &m_below : nullptr)) {
            m_out.stacks += m_current.anonymous;
        }
        m_below = m_current;
        m_has_below = true;
    }

    std::string_view m_text;
    std::string_view m_source;
    ResidentMemory m_out;
    Mapping m_current;
    Mapping m_below; // the mapping before (lower addresses): the guard page of a stack
    bool m_open = false;
    bool m_has_below = false;
    bool m_rollup = false;
};

} // namespace

Result<ResidentMemory> parse_smaps(std::string_view text, std::string_view source) {
    return SmapsReader(text, source).read();
}

} // namespace heapkit::stats
