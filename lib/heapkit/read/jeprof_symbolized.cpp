// SPDX-License-Identifier: MIT
#include "heapkit/read/jeprof_symbolized.hpp"

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/util/text.hpp"

namespace heapkit {
namespace {

constexpr std::string_view symbol_marker = "--- symbol";

// jeprof decorates names it took from `nm` with the symbol's start, "main<000000000000117d>";
// that is jeprof's annotation, not part of the function's name.
std::string_view strip_nm_address(std::string_view name) {
    if (!name.ends_with('>')) {
        return name;
    }
    size_t open = name.rfind('<');
    if (open == std::string_view::npos || open == 0) {
        return name;
    }
    std::string_view digits = name.substr(open + 1, name.size() - open - 2);
    if (digits.empty() || digits.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
        return name;
    }
    return name.substr(0, open);
}

// Splits "outer--inner" into its inline chain (outermost first).
std::vector<std::string> split_chain(std::string_view names) {
    std::vector<std::string> chain;
    for (;;) {
        size_t sep = names.find("--");
        std::string_view one = strip_nm_address(names.substr(0, sep));
        if (!one.empty()) {
            chain.emplace_back(one);
        }
        if (sep == std::string_view::npos) {
            return chain;
        }
        names.remove_prefix(sep + 2);
    }
}

} // namespace

bool is_jeprof_symbolized(std::string_view text) {
    return text.starts_with(symbol_marker) &&
           (text.size() == symbol_marker.size() || text[symbol_marker.size()] == '\n' ||
            text[symbol_marker.size()] == '\r');
}

Result<RawDump> parse_jeprof_symbolized(std::string_view text, std::string_view source,
                                        const ParsedUpTo& parsed_up_to, StackConsumer* consumer) {
    LineCursor lines(text);
    lines.next(); // "--- symbol"
    JeprofSymbols symbols;
    std::string binary;
    bool closed = false;
    while (auto line = lines.next()) {
        if (*line == "---") {
            closed = true;
            break;
        }
        std::string_view rest = *line;
        if (take_literal(rest, "binary=")) {
            binary = std::string(rest);
            continue;
        }
        auto address = take_hex(rest);
        if (!address || !take_literal(rest, " ")) {
            return fail("{}:{}: expected \"0x<address> <name>\" in the symbol section", source,
                        lines.line_number());
        }
        symbols[*address] = split_chain(rest);
    }
    if (!closed) {
        return fail("{}:{}: symbol section not closed by \"---\" (truncated file?)", source,
                    lines.line_number());
    }
    auto marker = lines.next();
    if (!marker || !marker->starts_with("--- ")) {
        return fail("{}:{}: expected \"--- heap\" after the symbol section", source,
                    lines.line_number() + (marker ? 0 : 1));
    }
    if (*marker != "--- heap") {
        return fail("{}:{}: \"{}\" profile is not a heap profile; heapkit reads heap profiles",
                    source, lines.line_number(), marker->substr(4));
    }
    if (lines.rest().find_first_not_of(" \t\r\n") == std::string_view::npos) {
        // What `jeprof --raw PROGRAM DUMP` leaves: it writes the symbols, then fails to
        // fetch a heap it can only fetch from a URL.
        return fail("{}:{}: the heap section after \"--- heap\" is empty: jeprof --raw writes "
                    "a heap only for a remote profile (a URL), not for a local dump; convert "
                    "the dump itself",
                    source, lines.line_number() + 1);
    }
    auto dump =
        parse_heap_v2(lines.rest(), source, lines.line_number() + 1, parsed_up_to, consumer);
    if (!dump) {
        return dump;
    }
    dump->jeprof_symbols = std::move(symbols);
    dump->jeprof_binary = std::move(binary);
    return dump;
}

} // namespace heapkit
