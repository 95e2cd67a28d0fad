// SPDX-License-Identifier: MIT
#include "heapkit/read/heap_v2.hpp"

#include "heapkit/read/address_ids.hpp"
#include "heapkit/read/maps.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <limits>

namespace heapkit {

namespace {

constexpr std::string_view maps_marker = "MAPPED_LIBRARIES:";

// A parsed count line: `t*` (thread_uid empty) or `tN`, plus the rest of the line.
struct CountLine {
    std::optional<uint64_t> thread_uid;
    SampledCounts counts;
    std::string_view trailing; // thread name in the header, must be empty under stacks
};

class HeapV2Parser {
public:
    HeapV2Parser(std::string_view text, std::string_view source, size_t first_line,
                 const ParsedUpTo& parsed_up_to, StackConsumer* consumer)
        : m_lines(text, first_line)
        , m_source(source)
        , m_parsed_up_to(parsed_up_to)
        , m_consumer(consumer)
        , m_next_report(text.data() + report_every) {}

    Result<RawDump> parse();

private:
    template <class... Args>
    tl::unexpected<Error> error_here(fmt::format_string<Args...> format, Args&&... args) const {
        return fail("{}:{}: {}", m_source, m_lines.line_number(),
                    fmt::format(format, std::forward<Args>(args)...));
    }

    Result<void> parse_header();
    Result<void> parse_stack(std::string_view line);
    Result<void> flush();
    Result<void> parse_maps();
    Result<CountLine> parse_count_line(std::string_view line) const;
    bool next_is_count_line() const;

    // Reports every few megabytes: often enough that a mapped input's pages leave while
    // the dump fills up, seldom enough to cost nothing.
    static constexpr size_t report_every = 8 << 20;
    void report_progress();

    LineCursor m_lines;
    std::string_view m_source;
    const ParsedUpTo& m_parsed_up_to;
    StackConsumer* m_consumer; // may be null: the stacks are then kept in m_dump
    const char* m_next_report;
    RawDump m_dump;
    AddressIds m_ids{m_dump.addresses};
    // Stacks read, their frames not yet given ids (parse_stack says why).
    struct PendingStack {
        RawStack stack;           // all but first_frame
        size_t line = 0;          // of its '@' line
        size_t first_address = 0; // index into m_pending_addresses
    };
    static constexpr size_t flush_every = 16;
    std::vector<PendingStack> m_pending;
    PodVector<uint64_t> m_pending_addresses;
};

void HeapV2Parser::report_progress() {
    const char* position = m_lines.rest().data();
    if (position >= m_next_report && m_parsed_up_to) {
        m_parsed_up_to(position);
        m_next_report = position + report_every;
    }
}

bool is_count_line(std::string_view line) {
    skip_spaces(line);
    return line.size() >= 2 && line[0] == 't' &&
           (line[1] == '*' || (line[1] >= '0' && line[1] <= '9'));
}

// Looks at the start of the next line only: peeking a whole line would scan it twice.
bool HeapV2Parser::next_is_count_line() const {
    std::string_view rest = m_lines.rest();
    return is_count_line(rest.substr(0, std::min<size_t>(rest.size(), 64)));
}

Result<CountLine> HeapV2Parser::parse_count_line(std::string_view line) const {
    // Raw pointers, as for stack lines: most dumps have two of these lines per stack.
    const char* p = line.data();
    const char* end = p + line.size();
    auto skip_blanks = [&] {
        while (p != end && (*p == ' ' || *p == '\t')) {
            ++p;
        }
    };
    auto take = [&](char c) {
        bool found = p != end && *p == c;
        p += found ? 1 : 0;
        return found;
    };
    auto take_number = [&]() -> std::optional<uint64_t> {
        std::string_view rest(p, static_cast<size_t>(end - p));
        auto value = take_decimal(rest);
        p = rest.data();
        return value;
    };
    CountLine parsed;
    skip_blanks();
    if (!take('t')) {
        return error_here("expected a count line \"tN: objects: bytes [objects: bytes]\"");
    }
    if (!take('*')) {
        parsed.thread_uid = take_number();
        if (!parsed.thread_uid) {
            return error_here("expected a thread number or '*' after 't'");
        }
    }
    // `: objects: bytes [objects: bytes]`, each number after its punctuation.
    constexpr char punctuation[] = {':', ':', '[', ':'};
    uint64_t values[4] = {};
    for (size_t i = 0; i < 4; ++i) {
        skip_blanks();
        if (!take(punctuation[i])) {
            return error_here("expected \"{}\" in count line", punctuation[i]);
        }
        skip_blanks();
        auto value = take_number();
        // jemalloc's counters are 64-bit; past 2^63 no real heap gets, and pprof's values
        // are signed.
        if (!value || *value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return error_here("expected a non-negative integer below 2^63 in count line");
        }
        values[i] = *value;
    }
    skip_blanks();
    if (!take(']')) {
        return error_here("expected \"]\" in count line");
    }
    parsed.counts = {values[0], values[1], values[2], values[3]};
    take(' ');
    parsed.trailing = std::string_view(p, static_cast<size_t>(end - p));
    return parsed;
}

Result<void> HeapV2Parser::parse_header() {
    auto first = m_lines.next();
    if (!first) {
        return fail("{}: empty file, expected a jemalloc heap_v2 dump", m_source);
    }
    std::string_view header = *first;
    if (!take_literal(header, "heap_v2/")) {
        if (first->starts_with("heap profile:") || first->starts_with("heap_v")) {
            return error_here("unsupported heap profile header \"{}\"; heapkit reads jemalloc "
                              "\"heap_v2/<period>\" dumps",
                              first->substr(0, 40));
        }
        return error_here("not a jemalloc heap profile: expected \"heap_v2/<period>\" header");
    }
    auto period = take_decimal(header);
    if (!period || !header.empty()) {
        return error_here("expected \"heap_v2/<period>\" with an integer period");
    }
    if (*period == 0) {
        return error_here("sample period is 0; jemalloc writes 2^lg_prof_sample, at least 1");
    }
    m_dump.sample_period = *period;

    bool seen_total = false;
    while (next_is_count_line()) {
        HEAPKIT_TRY_ASSIGN(CountLine parsed, parse_count_line(*m_lines.next()));
        if (!parsed.thread_uid) {
            if (seen_total || !parsed.trailing.empty()) {
                return error_here("unexpected \"t*\" line in the header");
            }
            m_dump.total = parsed.counts;
            seen_total = true;
            continue;
        }
        if (!seen_total) {
            return error_here("expected the \"t*:\" totals line before per-thread lines");
        }
        m_dump.threads.push_back({*parsed.thread_uid, parsed.counts});
        if (!parsed.trailing.empty()) {
            m_dump.thread_names[*parsed.thread_uid] = std::string(parsed.trailing);
        }
    }
    if (!seen_total) {
        return fail("{}:{}: expected \"t*:\" totals line after the header", m_source,
                    m_lines.line_number() + 1);
    }
    return {};
}

// A stack's frames are read as addresses and given ids later, a batch of stacks at a
// time (flush): the address table's slots of every frame of the batch load together,
// where one line's few addresses overlapped too little (issue 47).
Result<void> HeapV2Parser::parse_stack(std::string_view line) {
    constexpr size_t most = std::numeric_limits<uint32_t>::max();
    PendingStack pending;
    pending.line = m_lines.line_number();
    pending.first_address = m_pending_addresses.size();
    // The hottest loop of the parser: raw pointers, and take_hex's rules spelled out.
    const char* p = line.data() + 1; // after '@'
    const char* end = line.data() + line.size();
    auto is_space = [](char c) { return c == ' ' || c == '\t'; };
    for (;;) {
        while (p != end && is_space(*p)) {
            ++p;
        }
        if (p == end) {
            break;
        }
        if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            p += 2;
        }
        uint64_t address = 0;
        p = parse_hex_digits(p, end, address);
        if (p == nullptr || (p != end && !is_space(*p))) {
            return error_here("expected hexadecimal frame addresses after '@'");
        }
        m_ids.prefetch(address);
        m_pending_addresses.push_back(address);
    }
    size_t frames = m_pending_addresses.size() - pending.first_address;
    if (frames == 0) {
        return error_here("stack line has no frame addresses");
    }
    // Stacks keep 32-bit indexes: 2^32 frames take at least 8 GB of text.
    if (m_dump.frames.size() + m_pending_addresses.size() > most) {
        return error_here("more than 2^32 - 1 frames in one dump");
    }
    RawStack& stack = pending.stack;
    stack.frame_count = static_cast<uint32_t>(frames);
    if (!next_is_count_line()) {
        return fail("{}:{}: expected \"t*:\" count line after stack", m_source, pending.line + 1);
    }
    stack.first_thread = static_cast<uint32_t>(m_dump.stack_threads.size());
    bool seen_total = false;
    while (next_is_count_line()) {
        HEAPKIT_TRY_ASSIGN(CountLine parsed, parse_count_line(*m_lines.next()));
        if (!parsed.trailing.empty()) {
            return error_here("unexpected text after the counts of a stack's count line");
        }
        if (!parsed.thread_uid) {
            if (seen_total) {
                return error_here("second \"t*\" line for one stack");
            }
            stack.total = parsed.counts;
            seen_total = true;
        } else if (!seen_total) {
            return error_here("expected \"t*:\" count line after stack");
        } else if (m_dump.stack_threads.size() == most) {
            return error_here("more than 2^32 - 1 thread lines under stacks in one dump");
        } else {
            m_dump.stack_threads.push_back({*parsed.thread_uid, parsed.counts});
            ++stack.thread_count;
        }
    }
    m_pending.push_back(pending);
    return m_pending.size() < flush_every ? Result<void>{} : flush();
}

// The pending stacks' frames given ids, in the order read (ids number addresses as first
// met), and each stack kept or handed over. With a consumer, its frames and thread lines
// then leave the arrays, which stay a batch long.
Result<void> HeapV2Parser::flush() {
    if (m_pending.empty()) {
        return {};
    }
    size_t first_thread = m_pending.front().stack.first_thread;
    for (PendingStack& pending : m_pending) {
        RawStack& stack = pending.stack;
        size_t first_frame = m_dump.frames.size();
        stack.first_frame = static_cast<uint32_t>(first_frame);
        for (size_t a = 0; a < stack.frame_count; ++a) {
            uint32_t id = m_ids.id_of(m_pending_addresses[pending.first_address + a]);
            if (id == AddressIds::full) {
                return fail("{}:{}: more than 2^32 - 1 distinct frame addresses", m_source,
                            pending.line);
            }
            m_dump.frames.push_back(id);
        }
        if (m_consumer == nullptr) {
            m_dump.stacks.push_back(stack);
            continue;
        }
        auto given =
            m_consumer->add(m_dump.frames_of(stack), stack.total, m_dump.threads_of(stack));
        m_dump.frames.resize(first_frame);
        if (!given) {
            return fail("{}:{}: {}", m_source, pending.line, given.error().message);
        }
    }
    if (m_consumer != nullptr) {
        m_dump.stack_threads.resize(first_thread);
    }
    m_pending.clear();
    m_pending_addresses.clear();
    return {};
}

Result<void> HeapV2Parser::parse_maps() {
    m_dump.has_maps = true;
    while (auto line = m_lines.next()) {
        if (line->find_first_not_of(" \t") == std::string_view::npos) {
            continue;
        }
        HEAPKIT_TRY_ASSIGN(
            MapEntry entry,
            parse_maps_line(*line, fmt::format("{}:{}", m_source, m_lines.line_number())));
        entry.line = m_lines.line_number();
        m_dump.maps.push_back(std::move(entry));
    }
    return {};
}

Result<RawDump> HeapV2Parser::parse() {
    m_dump.source = std::string(m_source);
    HEAPKIT_TRY(parse_header());
    if (m_consumer != nullptr) {
        m_consumer->begin(m_dump);
    }
    while (auto line = m_lines.next()) {
        if (!line->empty() && line->front() == '@') {
            HEAPKIT_TRY(parse_stack(*line));
            report_progress();
            continue;
        }
        HEAPKIT_TRY(flush());
        if (line->find_first_not_of(" \t") == std::string_view::npos) {
            continue;
        } else if (*line == maps_marker) {
            HEAPKIT_TRY(parse_maps());
        } else if (line->find('\0') != std::string_view::npos) {
            return error_here("NUL byte in text; is this a binary file?");
        } else {
            return error_here("expected \"@ <addresses>\" stack line or \"{}\"", maps_marker);
        }
    }
    HEAPKIT_TRY(flush());
    if (!m_dump.has_maps) {
        return fail("{}:{}: no \"{}\" section at the end (truncated dump?)", m_source,
                    m_lines.line_number(), maps_marker);
    }
    return std::move(m_dump);
}

} // namespace

Result<RawDump> parse_heap_v2(std::string_view text, std::string_view source, size_t first_line,
                              const ParsedUpTo& parsed_up_to, StackConsumer* consumer) {
    return HeapV2Parser(text, source, first_line, parsed_up_to, consumer).parse();
}

} // namespace heapkit
