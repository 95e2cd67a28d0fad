// SPDX-License-Identifier: MIT
#include "heapkit/read/pprof_reader.hpp"

#include "heapkit/read/pprof_fields.hpp"
#include "heapkit/util/try.hpp"
#include "profile.pb.h"

#include <algorithm>
#include <climits>
#include <google/protobuf/arena.h>
#include <optional>
#include <unordered_map>

namespace heapkit {
namespace {

namespace pb = perftools::profiles;

constexpr uint32_t sample_field = 2; // Profile.sample

// Ids (any non-zero uint64) to positions: one hash look-up each, never a scan.
using IdIndex = std::unordered_map<uint64_t, uint32_t>;

// Checks one string index against the table: every text the file names goes through here.
class Strings {
public:
    Strings(size_t size, std::string_view source)
        : m_size(size)
        , m_source(source) {}

    Result<uint32_t> index(int64_t at, std::string_view what) const {
        if (at < 0 || static_cast<uint64_t>(at) >= m_size) {
            return fail("{}: {}: string index {} is outside the string table ({} strings)",
                        m_source, what, at, m_size);
        }
        return static_cast<uint32_t>(at);
    }

private:
    size_t m_size;
    std::string_view m_source;
};

// Positions of entries by id; an error for id 0 or an id given twice.
template <class Entries>
Result<IdIndex> index_ids(const Entries& entries, std::string_view what, std::string_view source) {
    IdIndex ids;
    ids.reserve(static_cast<size_t>(entries.size()));
    for (int i = 0; i < entries.size(); ++i) {
        uint64_t id = entries.Get(i).id();
        if (id == 0 || !ids.emplace(id, static_cast<uint32_t>(i)).second) {
            return fail("{}: {} id {} is {}", source, what, id, id == 0 ? "zero" : "given twice");
        }
    }
    return ids;
}

Result<uint32_t> position_of(const IdIndex& ids, uint64_t id, std::string_view what,
                             std::string_view source) {
    auto found = ids.find(id);
    if (found == ids.end()) {
        return fail("{}: no {} has id {}", source, what, id);
    }
    return found->second;
}

Result<void> read_header(const pb::Profile& in, const Strings& strings, PprofFile& out) {
    for (const pb::ValueType& type : in.sample_type()) {
        HEAPKIT_TRY_ASSIGN(uint32_t name, strings.index(type.type(), "sample type"));
        HEAPKIT_TRY_ASSIGN(uint32_t unit, strings.index(type.unit(), "sample type's unit"));
        out.sample_types.push_back({name, unit});
    }
    HEAPKIT_TRY_ASSIGN(out.default_sample_type,
                       strings.index(in.default_sample_type(), "default sample type"));
    out.time_nanos = in.time_nanos();
    out.duration_nanos = in.duration_nanos();
    out.period = in.period();
    return {};
}

Result<void> read_mappings(const pb::Profile& in, const Strings& strings, PprofFile& out) {
    for (const pb::Mapping& mapping : in.mapping()) {
        PprofMapping kept{mapping.memory_start(), mapping.memory_limit(), mapping.file_offset(), 0,
                          0};
        HEAPKIT_TRY_ASSIGN(kept.file, strings.index(mapping.filename(), "mapping's file"));
        HEAPKIT_TRY_ASSIGN(kept.build_id, strings.index(mapping.build_id(), "mapping's build id"));
        out.mappings.push_back(kept);
    }
    return {};
}

Result<void> read_functions(const pb::Profile& in, const Strings& strings, PprofFile& out) {
    for (const pb::Function& function : in.function()) {
        out.largest_function_id = std::max<uint64_t>(out.largest_function_id, function.id());
        PprofFunction kept{0, 0, 0, function.start_line()};
        HEAPKIT_TRY_ASSIGN(kept.name, strings.index(function.name(), "function name"));
        HEAPKIT_TRY_ASSIGN(kept.system_name,
                           strings.index(function.system_name(), "function's system name"));
        HEAPKIT_TRY_ASSIGN(kept.file, strings.index(function.filename(), "function's file"));
        out.functions.push_back(kept);
    }
    return {};
}

Result<void> read_locations(const pb::Profile& in, std::string_view source, PprofFile& out) {
    HEAPKIT_TRY_ASSIGN(IdIndex mappings, index_ids(in.mapping(), "mapping", source));
    HEAPKIT_TRY_ASSIGN(IdIndex functions, index_ids(in.function(), "function", source));
    out.locations.reserve(static_cast<size_t>(in.location_size()));
    for (const pb::Location& location : in.location()) {
        PprofLocation kept;
        kept.address = location.address();
        if (location.mapping_id() != 0) {
            HEAPKIT_TRY_ASSIGN(kept.mapping,
                               position_of(mappings, location.mapping_id(), "mapping", source));
        }
        for (const pb::Line& line : location.line()) {
            HEAPKIT_TRY_ASSIGN(uint32_t function,
                               position_of(functions, line.function_id(), "function", source));
            kept.lines.push_back({function, line.line(), line.column()});
        }
        out.locations.push_back(std::move(kept));
    }
    return {};
}

// The samples, one at a time from the encoded bytes into `out.samples`: a pb::Sample
// reused for each, its location ids turned into positions at once.
Result<void> read_samples(std::string_view bytes, const pb::Profile& tables,
                          std::string_view source, PprofFile& out) {
    HEAPKIT_TRY_ASSIGN(IdIndex locations, index_ids(tables.location(), "location", source));
    out.samples = PprofSamples(out.sample_types.size());
    pb::Sample sample;
    std::vector<uint32_t> positions;
    Result<void> failed;
    auto read = each_pprof_field(bytes, [&](uint32_t field, auto, std::string_view body) {
        if (field != sample_field || !failed) {
            return;
        }
        size_t number = out.samples.size() + 1;
        if (!sample.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
            failed = fail("{}: sample {} is damaged", source, number);
            return;
        }
        if (static_cast<size_t>(sample.value_size()) != out.sample_types.size()) {
            failed = fail("{}: sample {} has {} values for {} sample types", source, number,
                          sample.value_size(), out.sample_types.size());
            return;
        }
        positions.clear();
        for (uint64_t id : sample.location_id()) {
            auto at = position_of(locations, id, "location", source);
            if (!at) {
                failed = tl::unexpected(at.error());
                return;
            }
            positions.push_back(*at);
        }
        out.samples.add(positions,
                        std::span(sample.value().data(), static_cast<size_t>(sample.value_size())));
    });
    if (!read) {
        return fail("{}: not a pprof profile: {}", source, read.error().message);
    }
    return failed;
}

// The encoded profile without its samples: what the tables are parsed from.
Result<std::string> without_samples(std::string_view bytes, std::string_view source) {
    std::string tables;
    auto copied = each_pprof_field(bytes, [&](uint32_t field, std::string_view whole, auto) {
        if (field != sample_field) {
            tables.append(whole);
        }
    });
    if (!copied) {
        return fail("{}: not a pprof profile: {}", source, copied.error().message);
    }
    return tables;
}

// Whether `tag` is one of Profile's fields with its wire type: the repeated messages and
// strings (1-6) and period_type (11) length-delimited, comment (13) packed or not, the
// others varints.
bool valid_tag(unsigned char tag) {
    unsigned field = tag >> 3;
    unsigned wire = tag & 7;
    if (field < 1 || field > 15) {
        return false;
    }
    if (field <= 6 || field == 11) {
        return wire == 2;
    }
    return wire == 0 || (field == 13 && wire == 2);
}

// The varint at `at` (moved past it); nullopt when it does not end within 10 bytes.
std::optional<uint64_t> varint_at(std::string_view bytes, size_t& at) {
    uint64_t value = 0;
    for (int shift = 0; shift < 70 && at < bytes.size(); shift += 7) {
        auto byte = static_cast<unsigned char>(bytes[at++]);
        value |= uint64_t{byte & 0x7fu} << shift;
        if ((byte & 0x80) == 0) {
            return value;
        }
    }
    return std::nullopt;
}

} // namespace

bool looks_like_pprof(std::string_view bytes) {
    // The first fields (up to 8) as Profile's: each tag one of its fields with that
    // field's wire type, each varint ended, each length within the bytes. A text's bytes
    // fail within a few fields ("heap_v2/": 'h' is field 13's tag, 'a' no tag of it).
    size_t at = 0;
    int fields = 0;
    while (at < bytes.size() && fields < 8) {
        auto tag = static_cast<unsigned char>(bytes[at++]);
        if (!valid_tag(tag)) {
            return false;
        }
        auto value = varint_at(bytes, at);
        if (!value) {
            return false;
        }
        if ((tag & 7) == 2) {
            if (*value > bytes.size() - at) {
                return fields > 0 || at + 1 < bytes.size(); // runs past a first chunk
            }
            at += static_cast<size_t>(*value);
        }
        ++fields;
    }
    return fields > 0;
}

Result<PprofFile> read_pprof(std::string_view bytes, std::string_view source) {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
        return fail("{}: a pprof profile of {} bytes is larger than protobuf reads (2 GiB)", source,
                    bytes.size());
    }
    HEAPKIT_TRY_ASSIGN(std::string encoded_tables, without_samples(bytes, source));
    google::protobuf::Arena arena;
    pb::Profile& tables = *google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
    if (!tables.ParseFromArray(encoded_tables.data(), static_cast<int>(encoded_tables.size()))) {
        return fail("{}: not a pprof profile: its protobuf encoding is damaged or cut short",
                    source);
    }
    encoded_tables = std::string(); // parsed: its memory back before the samples are read
    if (tables.string_table_size() == 0 || !tables.string_table(0).empty()) {
        return fail("{}: not a pprof profile: its string table does not start with \"\"", source);
    }
    if (tables.sample_type_size() == 0) {
        return fail("{}: the pprof profile has no sample type", source);
    }
    PprofFile out;
    Strings strings(static_cast<size_t>(tables.string_table_size()), source);
    HEAPKIT_TRY(read_header(tables, strings, out));
    HEAPKIT_TRY(read_mappings(tables, strings, out));
    HEAPKIT_TRY(read_functions(tables, strings, out));
    HEAPKIT_TRY(read_locations(tables, source, out));
    HEAPKIT_TRY(read_samples(bytes, tables, source, out));
    out.strings.assign(tables.string_table().begin(), tables.string_table().end());
    return out;
}

} // namespace heapkit
