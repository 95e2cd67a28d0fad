// SPDX-License-Identifier: MIT
// The Handler's pages for jeprof's protocol, profiler control and Go's heap pages
// (routes.cpp lists them).
#include "heapkit/runtime/pages/heap_pages.hpp"

#include "heapkit/runtime/export/export.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace heapkit::runtime {
namespace {

Result<Profiler> active_profiler(const Request& request) {
    return Profiler::find(request.jemalloc).and_then([](Profiler profiler) {
        return profiler.require_active().map([&] { return profiler; });
    });
}

// alloc_* values exist only when jemalloc counts freed memory too (opt.prof_accum): the
// request is refused for that reason alone, not for a dump that happens to be empty.
Result<void> records_accumulated(const Profiler& profiler, SampleType sample) {
    if (!needs_accum(sample)) {
        return {};
    }
    auto accum = profiler.mallctl().read<bool>("opt.prof_accum");
    if (!accum || !*accum) {
        return fail("{} needs accumulated counts: start the process with "
                    "{}=prof_accum:true",
                    name_of(sample), profiler.mallctl().conf_variable());
    }
    return {};
}

Response conf_state(const Profiler& profiler) {
    auto active = profiler.active();
    auto lg_sample = profiler.lg_sample();
    if (!active || !lg_sample) {
        return failure(500, active ? lg_sample.error() : active.error());
    }
    return text(200, fmt::format("prof.active:{},prof.lg_sample:{}", *active, *lg_sample));
}

} // namespace

Response raw_heap(const Request& request) {
    auto profiler = active_profiler(request);
    if (!profiler) {
        return failure(403, profiler.error());
    }
    auto dump = profiler->dump(Profiler::Check::done_by_caller);
    return dump ? text(200, std::move(*dump)) : failure(500, dump.error());
}

std::optional<std::vector<uint64_t>> symbol_addresses(std::string_view body) {
    std::vector<uint64_t> addresses;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) {
        body.remove_suffix(1);
    }
    while (!body.empty()) {
        size_t plus = body.find('+');
        std::string_view one = body.substr(0, plus);
        body.remove_prefix(plus == std::string_view::npos ? body.size() : plus + 1);
        auto address = take_hex(one);
        if (!address || !one.empty()) {
            return std::nullopt;
        }
        addresses.push_back(*address);
    }
    return addresses;
}

Response symbol(const Request& request) {
    if (request.method != "POST") {
        return text(200, "num_symbols: 1"); // jeprof only checks that this is positive
    }
    auto addresses = symbol_addresses(request.body);
    if (!addresses) {
        return text(400, "expected 0x<hex> addresses joined by '+'");
    }
    auto lines = symbol_lines(*addresses);
    return lines ? text(200, std::move(*lines)) : failure(500, lines.error());
}

Response cmdline(const Request&) {
    auto input = read_input("/proc/self/cmdline");
    if (!input) {
        return failure(500, input.error());
    }
    std::string lines = input->bytes;
    std::replace(lines.begin(), lines.end(), '\0', '\n');
    return text(200, std::move(lines));
}

Response conf(const Request& request) {
    auto profiler = Profiler::find(request.jemalloc);
    if (!profiler) {
        return failure(403, profiler.error());
    }
    auto enabled = profiler->enabled();
    if (!enabled || !*enabled) {
        return text(403, fmt::format("heap profiling is not enabled: start the process with "
                                     "{}=prof:true",
                                     profiler->mallctl().conf_variable()));
    }
    if (request.method == "GET") {
        return conf_state(*profiler);
    }
    auto setting = percent_decode(request.query);
    std::string_view value = setting ? std::string_view(*setting) : std::string_view();
    Result<void> done = fail("expected ?prof.active:true|false or ?prof.reset:<lg_sample>");
    // take_literal leaves `value` as it was when the prefix is not there.
    if (take_literal(value, "prof.active:")) {
        if (value == "true" || value == "false") {
            done = profiler->set_active(value == "true");
        }
    } else if (take_literal(value, "prof.reset:")) {
        auto lg = take_decimal(value);
        if (lg && value.empty() && *lg < 64) {
            done = profiler->reset(static_cast<size_t>(*lg));
        }
    }
    if (!done) {
        return failure(400, done.error());
    }
    return conf_state(*profiler);
}

Response go_heap(const Request& request, bool folded) {
    static constexpr std::string_view keys[] = {"symbolize", "threads", "sample", "debug"};
    auto query = parse_query(request.path, request.query, keys);
    if (!query) {
        return text(400, "query takes symbolize=0|1, threads=0|1, sample=TYPE");
    }
    if (auto debug = query_debug(*query, "As text: go tool pprof -top URL, or "
                                         "/debug/pprof/heap.folded (collapsed stacks).");
        !debug) {
        return failure(400, debug.error());
    }
    auto symbolized = query_flag(*query, "symbolize", true);
    auto threads = query_flag(*query, "threads", false);
    auto sample = query->count("sample") ? parse_sample_type(query->at("sample"))
                                         : std::optional(SampleType::inuse_space);
    if (!symbolized || !threads || !sample) {
        return text(400, "query takes symbolize=0|1, threads=0|1, "
                         "sample=inuse_space|inuse_objects|alloc_space|alloc_objects");
    }
    auto profiler = active_profiler(request);
    if (!profiler) {
        return failure(403, profiler.error());
    }
    if (auto accum = records_accumulated(*profiler, *sample); !accum) {
        return failure(400, accum.error());
    }
    auto dump = profiler->dump(Profiler::Check::done_by_caller);
    if (!dump) {
        return failure(500, dump.error());
    }
    LoadOptions options;
    options.sample = *sample;
    options.per_thread = *threads;
    options.symbols.names = *symbolized;
    auto body = folded ? folded_from_dump(*dump, options) : pprof_from_dump(*dump, options);
    if (!body) {
        return failure(500, body.error());
    }
    if (folded) {
        return text(200, std::move(*body));
    }
    return binary(std::move(*body), "application/octet-stream", "heap.pb.gz");
}

} // namespace heapkit::runtime
