// SPDX-License-Identifier: MIT
// nlohmann-json (Debian's nlohmann-json3-dev) reads the document: 50 KB once per run, so
// its speed does not matter, and it reports where a truncated or damaged document breaks.
#include "heapkit/stats/stats_json.hpp"

#include "heapkit/util/try.hpp"

#include <nlohmann/json.hpp>

namespace heapkit::stats {
namespace {

using nlohmann::json;

// Reads members of one object, remembering where it is for messages.
class Fields {
public:
    Fields(const json& object, std::string path, std::string_view source)
        : m_object(&object)
        , m_path(std::move(path))
        , m_source(source) {}

    bool has(const char* key) const { return m_object->is_object() && m_object->contains(key); }

    Result<uint64_t> u64(const char* key) const {
        const json* value = find(key);
        if (value == nullptr || !value->is_number_unsigned()) {
            return missing(key, "an unsigned number");
        }
        return value->get<uint64_t>();
    }

    Result<int64_t> i64(const char* key) const {
        const json* value = find(key);
        if (value == nullptr || !value->is_number_integer()) {
            return missing(key, "an integer");
        }
        return value->get<int64_t>();
    }

    Result<bool> boolean(const char* key) const {
        const json* value = find(key);
        if (value == nullptr || !value->is_boolean()) {
            return missing(key, "true or false");
        }
        return value->get<bool>();
    }

    Result<Fields> object(const char* key) const {
        const json* value = find(key);
        if (value == nullptr || !value->is_object()) {
            return missing(key, "an object");
        }
        return Fields(*value, m_path + "." + key, m_source);
    }

    const json& raw() const { return *m_object; }
    const std::string& path() const { return m_path; }
    std::string_view source() const { return m_source; }

private:
    const json* find(const char* key) const {
        if (!m_object->is_object()) {
            return nullptr;
        }
        auto found = m_object->find(key);
        return found == m_object->end() ? nullptr : &*found;
    }

    tl::unexpected<Error> missing(const char* key, const char* what) const {
        return fail("{}: {}.{} is missing or not {}", m_source, m_path, key, what);
    }

    const json* m_object; // borrowed from the document
    std::string m_path;
    std::string_view m_source;
};

// arenas.bin[j]: the size classes' shapes.
Result<std::vector<BinStats>> read_bin_shapes(const Fields& arenas, std::string_view source) {
    std::vector<BinStats> bins;
    if (!arenas.has("bin") || !arenas.raw()["bin"].is_array()) {
        return fail("{}: jemalloc.arenas.bin is missing (printed without the general section: "
                    "drop \"g\" from stats_print_opts)",
                    source);
    }
    const json& list = arenas.raw()["bin"];
    for (size_t j = 0; j < list.size(); ++j) {
        Fields bin(list[j], fmt::format("{}.bin[{}]", arenas.path(), j), source);
        BinStats shape;
        HEAPKIT_TRY_ASSIGN(shape.size, bin.u64("size"));
        HEAPKIT_TRY_ASSIGN(shape.regions, bin.u64("nregs"));
        HEAPKIT_TRY_ASSIGN(shape.slab_size, bin.u64("slab_size"));
        bins.push_back(shape);
    }
    return bins;
}

Result<ArenaStats> read_arena(const Fields& arena, const std::vector<BinStats>& shapes,
                              std::string_view source) {
    ArenaStats out;
    HEAPKIT_TRY_ASSIGN(out.threads, arena.u64("nthreads"));
    HEAPKIT_TRY_ASSIGN(out.pactive, arena.u64("pactive"));
    HEAPKIT_TRY_ASSIGN(out.pdirty, arena.u64("pdirty"));
    HEAPKIT_TRY_ASSIGN(out.pmuzzy, arena.u64("pmuzzy"));
    HEAPKIT_TRY_ASSIGN(out.dirty_decay_ms, arena.i64("dirty_decay_ms"));
    HEAPKIT_TRY_ASSIGN(out.muzzy_decay_ms, arena.i64("muzzy_decay_ms"));
    HEAPKIT_TRY_ASSIGN(out.base, arena.u64("base"));
    HEAPKIT_TRY_ASSIGN(out.internal, arena.u64("internal"));
    HEAPKIT_TRY_ASSIGN(out.tcache_bytes, arena.u64("tcache_bytes"));
    HEAPKIT_TRY_ASSIGN(out.resident, arena.u64("resident"));
    HEAPKIT_TRY_ASSIGN(out.mapped, arena.u64("mapped"));
    HEAPKIT_TRY_ASSIGN(out.retained, arena.u64("retained"));
    HEAPKIT_TRY_ASSIGN(Fields small, arena.object("small"));
    HEAPKIT_TRY_ASSIGN(Fields large, arena.object("large"));
    HEAPKIT_TRY_ASSIGN(out.small_allocated, small.u64("allocated"));
    HEAPKIT_TRY_ASSIGN(out.large_allocated, large.u64("allocated"));
    if (!arena.has("bins")) {
        return out; // printed without bins (stats_print_opts "b")
    }
    const json& bins = arena.raw()["bins"];
    if (!bins.is_array() || bins.size() != shapes.size()) {
        return fail("{}: {}.bins has {} entries, jemalloc.arenas.bin {}", source, arena.path(),
                    bins.is_array() ? bins.size() : 0, shapes.size());
    }
    for (size_t j = 0; j < bins.size(); ++j) {
        Fields bin(bins[j], fmt::format("{}.bins[{}]", arena.path(), j), source);
        BinStats stats = shapes[j];
        HEAPKIT_TRY_ASSIGN(stats.curregs, bin.u64("curregs"));
        HEAPKIT_TRY_ASSIGN(stats.curslabs, bin.u64("curslabs"));
        if (bin.has("nonfull_slabs")) { // 5.2.1 on
            HEAPKIT_TRY_ASSIGN(stats.nonfull_slabs, bin.u64("nonfull_slabs"));
        }
        out.bins.push_back(stats);
    }
    return out;
}

// stats.arenas: "merged" when more than one arena is in use, else the one arena by its
// index. The count of arenas printed apart is how many are in use.
Result<void> read_arenas(const Fields& root, JemallocStats& out) {
    std::string_view source = root.source();
    if (!root.has("stats.arenas")) {
        return fail("{}: jemalloc.stats.arenas is missing (printed without merged and per-arena "
                    "statistics: keep \"m\" or \"a\" out of stats_print_opts)",
                    source);
    }
    HEAPKIT_TRY_ASSIGN(Fields arenas, root.object("stats.arenas"));
    HEAPKIT_TRY_ASSIGN(Fields general, root.object("arenas"));
    HEAPKIT_TRY_ASSIGN(std::vector<BinStats> shapes, read_bin_shapes(general, source));
    const json* chosen = nullptr;
    std::string name;
    for (const auto& [key, value] : arenas.raw().items()) {
        bool index = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
        out.arenas_in_use += index ? 1 : 0;
        if (key == "merged" || (index && chosen == nullptr)) {
            chosen = &value;
            name = key;
        }
    }
    if (chosen == nullptr) {
        return fail("{}: jemalloc.stats.arenas holds neither \"merged\" nor any arena", source);
    }
    if (name != "merged" && out.arenas_in_use > 1) {
        return fail("{}: jemalloc.stats.arenas has {} arenas but no \"merged\" (keep \"m\" out of "
                    "stats_print_opts)",
                    source, out.arenas_in_use);
    }
    auto arena =
        read_arena(Fields(*chosen, "jemalloc.stats.arenas." + name, source), shapes, source);
    if (!arena) {
        return tl::unexpected(arena.error());
    }
    out.merged = std::move(*arena);
    return {};
}

Result<void> read_options(const Fields& root, JemallocStats& out) {
    HEAPKIT_TRY_ASSIGN(Fields opt, root.object("opt"));
    HEAPKIT_TRY_ASSIGN(Fields general, root.object("arenas"));
    HEAPKIT_TRY_ASSIGN(out.retain, opt.boolean("retain"));
    HEAPKIT_TRY_ASSIGN(out.tcache, opt.boolean("tcache"));
    if (opt.has("prof")) { // a jemalloc built without --enable-prof prints no opt.prof
        HEAPKIT_TRY_ASSIGN(out.profiling, opt.boolean("prof"));
    }
    if (opt.has("stats_print")) {
        HEAPKIT_TRY_ASSIGN(out.printed_at_exit, opt.boolean("stats_print"));
    }
    HEAPKIT_TRY_ASSIGN(out.narenas_option, opt.i64("narenas"));
    HEAPKIT_TRY_ASSIGN(out.background_thread, opt.boolean("background_thread"));
    HEAPKIT_TRY_ASSIGN(out.page, general.u64("page"));
    HEAPKIT_TRY_ASSIGN(out.narenas, general.u64("narenas"));
    HEAPKIT_TRY_ASSIGN(out.dirty_decay_ms, general.i64("dirty_decay_ms"));
    HEAPKIT_TRY_ASSIGN(out.muzzy_decay_ms, general.i64("muzzy_decay_ms"));
    HEAPKIT_TRY_ASSIGN(out.tcache_max, general.u64("tcache_max"));
    if (root.has("stats")) {
        HEAPKIT_TRY_ASSIGN(Fields stats, root.object("stats"));
        // The current value (background_thread may be switched on at run time); the
        // background_thread object is only printed when threads have run.
        if (stats.has("background_thread")) {
            HEAPKIT_TRY_ASSIGN(Fields threads, stats.object("background_thread"));
            HEAPKIT_TRY_ASSIGN(uint64_t running, threads.u64("num_threads"));
            out.background_thread = out.background_thread || running > 0;
        }
    }
    return {};
}

Result<void> read_totals(const Fields& root, JemallocStats& out) {
    HEAPKIT_TRY_ASSIGN(Fields stats, root.object("stats"));
    HEAPKIT_TRY_ASSIGN(out.allocated, stats.u64("allocated"));
    HEAPKIT_TRY_ASSIGN(out.active, stats.u64("active"));
    HEAPKIT_TRY_ASSIGN(out.metadata, stats.u64("metadata"));
    HEAPKIT_TRY_ASSIGN(out.resident, stats.u64("resident"));
    HEAPKIT_TRY_ASSIGN(out.mapped, stats.u64("mapped"));
    HEAPKIT_TRY_ASSIGN(out.retained, stats.u64("retained"));
    return {};
}

Result<json> parse_document(std::string_view text, std::string_view source) {
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::parse_error& error) {
        return fail("{}: not valid JSON at byte {}{}", source, error.byte,
                    error.byte >= text.size() ? " (the document ends early: truncated?)" : "");
    } catch (const json::exception& error) {
        // A number beyond a double (1e999) is out_of_range, not a parse_error; jemalloc
        // never prints one.
        return fail("{}: not jemalloc statistics: {}", source, error.what());
    }
}

} // namespace

Result<JemallocStats> parse_stats_json(std::string_view text, std::string_view source) {
    auto document = parse_document(text, source);
    if (!document) {
        return tl::unexpected(document.error());
    }
    if (!document->is_object() || !document->contains("jemalloc") ||
        !(*document)["jemalloc"].is_object()) {
        return fail("{}: not jemalloc statistics (no top-level \"jemalloc\" object, as "
                    "malloc_stats_print with option J writes)",
                    source);
    }
    Fields root((*document)["jemalloc"], "jemalloc", source);
    JemallocStats out;
    out.format = "json";
    if (root.has("version") && root.raw()["version"].is_string()) {
        out.version = root.raw()["version"].get<std::string>();
    }
    if (root.has("config")) {
        HEAPKIT_TRY_ASSIGN(Fields config, root.object("config"));
        HEAPKIT_TRY_ASSIGN(bool enabled, config.boolean("stats"));
        if (!enabled) {
            return fail("{}: this jemalloc was built without statistics (config.stats is "
                        "false; configure --enable-stats): there are no figures to explain",
                        source);
        }
    }
    if (!root.has("stats")) {
        return fail("{}: jemalloc.stats is missing: a jemalloc built without statistics "
                    "(--disable-stats) prints none",
                    source);
    }
    for (auto step : {read_options, read_totals, read_arenas}) {
        if (auto done = step(root, out); !done) {
            return tl::unexpected(done.error());
        }
    }
    return out;
}

} // namespace heapkit::stats
