// SPDX-License-Identifier: MIT
// The allocation log's layout, as jemalloc's src/prof_log.c writes it (one line, compact):
//   {"info":{"duration":NS,"version":"5.3.0-...","lg_sample_rate":N,
//            "prof_time_resolution":"high","pid":PID},
//    "threads":[{"thr_uid":U,"thr_name":"..."},...],
//    "stack_traces":[["0x7f..",...],...],
//    "allocations":[{"alloc_thread":I,"free_thread":I,"alloc_trace":I,"free_trace":I,
//                    "alloc_timestamp":NS,"free_timestamp":NS,"usize":B},...]}
// Threads and traces are referred to by their index in their arrays. nlohmann-json
// (Debian's nlohmann-json3-dev, as the stats reader uses) reads it; the allocation records,
// most of a log, are taken out as the parser meets them (AllocationReader).
#include "heapkit/read/prof_log.hpp"

#include "heapkit/util/try.hpp"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

namespace heapkit {
namespace {

using nlohmann::json;

// Where a member sits, for messages: "allocations[12].usize".
struct Place {
    std::string_view source;
    std::string path;
};

tl::unexpected<Error> wrong(const Place& at, std::string_view key, std::string_view expected) {
    return fail("{}: {}{}{}: expected {}", at.source, at.path, at.path.empty() ? "" : ".", key,
                expected);
}

const json* member(const json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

Result<uint64_t> unsigned_member(const json& object, const char* key, const Place& at) {
    const json* value = member(object, key);
    if (value == nullptr || !value->is_number_unsigned()) {
        return wrong(at, key, "an unsigned number");
    }
    return value->get<uint64_t>();
}

Result<int64_t> integer_member(const json& object, const char* key, const Place& at) {
    const json* value = member(object, key);
    if (value == nullptr || !value->is_number_integer()) {
        return wrong(at, key, "an integer");
    }
    return value->get<int64_t>();
}

Result<std::string> string_member(const json& object, const char* key, const Place& at) {
    const json* value = member(object, key);
    if (value == nullptr || !value->is_string()) {
        return wrong(at, key, "a string");
    }
    return value->get<std::string>();
}

// An index into another array, as the 32 bits LogAllocation keeps; checked against that
// array once the whole log is read (check_indexes).
Result<uint32_t> index_member(const json& object, const char* key, const Place& at) {
    HEAPKIT_TRY_ASSIGN(uint64_t index, unsigned_member(object, key, at));
    if (index > std::numeric_limits<uint32_t>::max()) {
        return fail("{}: {}.{} is {}: no log has that many entries", at.source, at.path, key,
                    index);
    }
    return static_cast<uint32_t>(index);
}

Result<const json*> array_member(const json& root, const char* key, std::string_view source) {
    const json* value = member(root, key);
    if (value == nullptr || !value->is_array()) {
        return fail("{}: \"{}\" is missing or not an array: not a whole jemalloc allocation log",
                    source, key);
    }
    return value;
}

// What a parser callback refuses: it cannot return an error, so it throws one, which
// parse_document catches.
struct Rejected {
    Error error;
};

Result<json> parse_document(std::string_view text, std::string_view source,
                            const json::parser_callback_t& callback) {
    try {
        return json::parse(text.begin(), text.end(), callback);
    } catch (const Rejected& rejected) {
        return tl::unexpected(rejected.error);
    } catch (const json::parse_error& error) {
        if (error.byte >= text.size()) {
            return fail("{}: the allocation log ends early (byte {} of {}): cut short, as when "
                        "the process was killed while jemalloc wrote it",
                        source, error.byte, text.size());
        }
        return fail("{}: not valid JSON at byte {}", source, error.byte);
    } catch (const json::exception& error) {
        return fail("{}: not a readable allocation log: {}", source, error.what());
    }
}

Result<void> read_info(const json& root, ProfLog& log) {
    Place at{log.source, "info"};
    const json* info = member(root, "info");
    if (info == nullptr || !info->is_object()) {
        if (member(root, "jemalloc") != nullptr) {
            return fail("{}: jemalloc's statistics (malloc_stats_print in JSON), not an "
                        "allocation log: read it with jestat {}",
                        log.source, log.source);
        }
        return fail("{}: no \"info\" object: not a jemalloc allocation log (prof.log_start "
                    "writes one)",
                    log.source);
    }
    HEAPKIT_TRY_ASSIGN(log.duration_nanos, unsigned_member(*info, "duration", at));
    HEAPKIT_TRY_ASSIGN(log.version, string_member(*info, "version", at));
    HEAPKIT_TRY_ASSIGN(int64_t lg, integer_member(*info, "lg_sample_rate", at));
    if (lg < 0 || lg > 62) {
        return fail("{}: info.lg_sample_rate is {}: jemalloc allows 0 to 62", log.source, lg);
    }
    log.lg_sample_rate = static_cast<unsigned>(lg);
    HEAPKIT_TRY_ASSIGN(log.time_resolution, string_member(*info, "prof_time_resolution", at));
    HEAPKIT_TRY_ASSIGN(log.pid, integer_member(*info, "pid", at));
    return {};
}

Result<void> read_threads(const json& root, ProfLog& log) {
    HEAPKIT_TRY_ASSIGN(const json* threads, array_member(root, "threads", log.source));
    log.threads.reserve(threads->size());
    for (size_t i = 0; i < threads->size(); ++i) {
        const json& entry = (*threads)[i];
        Place at{log.source, fmt::format("threads[{}]", i)};
        if (!entry.is_object()) {
            return fail("{}: {}: expected an object", log.source, at.path);
        }
        LogThread thread;
        HEAPKIT_TRY_ASSIGN(thread.uid, unsigned_member(entry, "thr_uid", at));
        HEAPKIT_TRY_ASSIGN(thread.name, string_member(entry, "thr_name", at));
        log.threads.push_back(std::move(thread));
    }
    return {};
}

// "%p" as jemalloc's malloc_snprintf prints it: 0x and lower-case hex.
std::optional<uint64_t> parse_address(std::string_view text) {
    if (text.size() < 3 || text.substr(0, 2) != "0x") {
        return std::nullopt;
    }
    uint64_t address = 0;
    auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), address, 16);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return address;
}

Result<void> read_traces(const json& root, ProfLog& log) {
    HEAPKIT_TRY_ASSIGN(const json* traces, array_member(root, "stack_traces", log.source));
    log.traces.reserve(traces->size());
    for (size_t i = 0; i < traces->size(); ++i) {
        const json& entry = (*traces)[i];
        if (!entry.is_array()) {
            return fail("{}: stack_traces[{}]: expected an array of addresses", log.source, i);
        }
        std::vector<uint64_t> frames;
        frames.reserve(entry.size());
        for (size_t f = 0; f < entry.size(); ++f) {
            const json& frame = entry[f];
            auto address = frame.is_string() ? parse_address(frame.get_ref<const std::string&>())
                                             : std::nullopt;
            if (!address) {
                return fail("{}: stack_traces[{}][{}]: expected an address such as "
                            "\"0x7f1e59aa2630\"",
                            log.source, i, f);
            }
            frames.push_back(*address);
        }
        log.traces.push_back(std::move(frames));
    }
    return {};
}

Result<LogAllocation> read_allocation(const json& entry, const ProfLog& log, size_t i) {
    Place at{log.source, fmt::format("allocations[{}]", i)};
    if (!entry.is_object()) {
        return fail("{}: {}: expected an object", log.source, at.path);
    }
    LogAllocation out;
    HEAPKIT_TRY_ASSIGN(out.alloc_thread, index_member(entry, "alloc_thread", at));
    HEAPKIT_TRY_ASSIGN(out.free_thread, index_member(entry, "free_thread", at));
    HEAPKIT_TRY_ASSIGN(out.alloc_trace, index_member(entry, "alloc_trace", at));
    HEAPKIT_TRY_ASSIGN(out.free_trace, index_member(entry, "free_trace", at));
    HEAPKIT_TRY_ASSIGN(out.alloc_nanos, unsigned_member(entry, "alloc_timestamp", at));
    HEAPKIT_TRY_ASSIGN(out.free_nanos, unsigned_member(entry, "free_timestamp", at));
    HEAPKIT_TRY_ASSIGN(out.usize, unsigned_member(entry, "usize", at));
    // The high-resolution clock is the wall clock (CLOCK_REALTIME): stepped back between
    // an allocation and its free, the free appears first. Such a lifetime is unknown, and
    // taking it as 0 says the least.
    if (out.free_nanos < out.alloc_nanos) {
        out.free_nanos = out.alloc_nanos;
    }
    return out;
}

// Every index of every allocation inside its array.
Result<void> check_indexes(const ProfLog& log) {
    size_t threads = log.threads.size();
    size_t traces = log.traces.size();
    for (size_t i = 0; i < log.allocations.size(); ++i) {
        const LogAllocation& a = log.allocations[i];
        for (auto [key, index, size, array] :
             {std::tuple("alloc_thread", a.alloc_thread, threads, "threads"),
              std::tuple("free_thread", a.free_thread, threads, "threads"),
              std::tuple("alloc_trace", a.alloc_trace, traces, "stack_traces"),
              std::tuple("free_trace", a.free_trace, traces, "stack_traces")}) {
            if (index >= size) {
                return fail("{}: allocations[{}].{} is {}, but \"{}\" has {} entries", log.source,
                            i, key, index, array, size);
            }
        }
    }
    return {};
}

// The allocation records are most of a log: each is read as its object closes and left
// out of the document (a record kept as JSON took ~0.9 KB, as a LogAllocation 40 bytes).
// A record it refuses is thrown as Rejected.
class AllocationReader {
public:
    explicit AllocationReader(ProfLog& log)
        : m_log(log) {}

    bool operator()(int depth, json::parse_event_t event, json& parsed) {
        using Event = json::parse_event_t;
        if (depth == 1 && event == Event::key) {
            m_in_allocations = parsed == "allocations";
            return true;
        }
        if (!m_in_allocations || depth != 2) {
            return true;
        }
        // An entry of "allocations": an object closing, or anything else (refused).
        if (event == Event::object_end || event == Event::value || event == Event::array_end) {
            auto allocation = read_allocation(parsed, m_log, m_log.allocations.size());
            if (!allocation) {
                throw Rejected{allocation.error()};
            }
            m_log.allocations.push_back(*allocation);
            return false;
        }
        return true;
    }

private:
    ProfLog& m_log;
    bool m_in_allocations = false;
};

} // namespace

Result<ProfLog> parse_prof_log(std::string_view text, std::string_view source) {
    ProfLog log;
    log.source = std::string(source);
    HEAPKIT_TRY_ASSIGN(json root, parse_document(text, source, AllocationReader(log)));
    if (!root.is_object()) {
        return fail("{}: not a jemalloc allocation log (expected a JSON object)", source);
    }
    for (auto step : {read_info, read_threads, read_traces}) {
        HEAPKIT_TRY(step(root, log));
    }
    HEAPKIT_TRY(array_member(root, "allocations", log.source));
    HEAPKIT_TRY(check_indexes(log));
    return log;
}

bool looks_like_prof_log(std::string_view text) {
    size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{';
}

std::optional<int64_t> pid_in_file_name(std::string_view path) {
    std::string_view name = path.substr(path.rfind('/') + 1);
    if (name.ends_with(".gz")) {
        name.remove_suffix(3);
    }
    // Split off the dot-separated fields from the end: json | heap, kind+n.
    auto take_last = [&name]() -> std::optional<std::string_view> {
        size_t dot = name.rfind('.');
        if (dot == std::string_view::npos) {
            return std::nullopt;
        }
        std::string_view field = name.substr(dot + 1);
        name = name.substr(0, dot);
        return field;
    };
    auto number = [](std::optional<std::string_view> field) -> std::optional<int64_t> {
        int64_t value = 0;
        if (!field || field->empty()) {
            return std::nullopt;
        }
        auto [end, ec] = std::from_chars(field->data(), field->data() + field->size(), value);
        if (ec != std::errc() || end != field->data() + field->size() || value < 0) {
            return std::nullopt;
        }
        return value;
    };
    auto suffix = take_last();
    if (!suffix || (*suffix != "json" && *suffix != "heap")) {
        return std::nullopt;
    }
    if (*suffix == "heap") {
        // "f", "i3", "m0", "u1"; or, in a name given to prof.dump by hand in jemalloc's
        // manner ("jeprof.14739.100.heap"), the sequence number already.
        std::string_view before = name;
        auto kind = take_last();
        bool is_kind = kind && !kind->empty() &&
                       std::string_view("fimu").find((*kind)[0]) != std::string_view::npos;
        if (!is_kind) {
            if (!number(kind)) {
                return std::nullopt;
            }
            name = before;
        }
    }
    if (!number(take_last())) { // the sequence number
        return std::nullopt;
    }
    std::optional<int64_t> pid = number(take_last());
    if (!pid || name.empty()) {
        return std::nullopt; // the prefix may hold dots, but it must be there
    }
    return pid;
}

} // namespace heapkit
