// SPDX-License-Identifier: MIT
// A pprof profile (perftools.profiles.Profile, already inflated) as written, every index
// checked: what the model makes a Profile of (model/pprof_profile.hpp).
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// True when `bytes` start as an encoded Profile does: with the tag of one of its fields
// (sample_type, sample, mapping, ...), which no text dump or log starts with. Inflated
// bytes, or the first chunk of them (util/gzip.hpp's GunzipLimits::binary_ok).
bool looks_like_pprof(std::string_view bytes);

// Texts are indexes into PprofFile::strings, all checked against its size.
struct PprofValueType {
    uint32_t type = 0; // e.g. "inuse_space", "samples", "cpu"
    uint32_t unit = 0; // e.g. "bytes", "count", "nanoseconds"
};

struct PprofMapping {
    uint64_t start = 0;       // runtime address
    uint64_t limit = 0;       // runtime address, exclusive
    uint64_t file_offset = 0; // file offset of `start`
    uint32_t file = 0;
    uint32_t build_id = 0;
};

struct PprofFunction {
    uint32_t name = 0;
    uint32_t system_name = 0;
    uint32_t file = 0;
    int64_t start_line = 0;
};

inline constexpr uint32_t pprof_none = std::numeric_limits<uint32_t>::max();

// One source line of a location; its function an index into PprofFile::functions.
struct PprofLine {
    uint32_t function = 0;
    int64_t line = 0;
    int64_t column = 0;
};

struct PprofLocation {
    uint64_t address = 0;          // runtime address, as the producer wrote it
    uint32_t mapping = pprof_none; // index into PprofFile::mappings, or none
    std::vector<PprofLine> lines;  // innermost first (pprof: the last is the caller)
};

// Every sample, flat: one array of locations and one of values for all of them (a vector
// each per sample, for a million samples, took more memory than the encoded profile).
class PprofSamples {
public:
    explicit PprofSamples(size_t types = 0)
        : m_types(types) {}

    size_t size() const { return m_starts.size(); }
    // Indexes into PprofFile::locations, leaf first.
    std::span<const uint32_t> locations(size_t sample) const {
        size_t end = sample + 1 < m_starts.size() ? m_starts[sample + 1] : m_locations.size();
        return {m_locations.data() + m_starts[sample], end - m_starts[sample]};
    }
    // One per sample type.
    std::span<const int64_t> values(size_t sample) const {
        return {m_values.data() + sample * m_types, m_types};
    }

    void add(std::span<const uint32_t> locations, std::span<const int64_t> values) {
        m_starts.push_back(m_locations.size());
        m_locations.insert(m_locations.end(), locations.begin(), locations.end());
        m_values.insert(m_values.end(), values.begin(), values.end());
    }

private:
    size_t m_types;
    std::vector<size_t> m_starts;
    std::vector<uint32_t> m_locations;
    std::vector<int64_t> m_values;
};

struct PprofFile {
    std::vector<std::string> strings; // the string table; [0] is ""
    std::vector<PprofValueType> sample_types;
    uint32_t default_sample_type = 0; // a string index; 0: none named
    std::vector<PprofMapping> mappings;
    std::vector<PprofFunction> functions;
    uint64_t largest_function_id = 0; // new functions (naming in place) take ids above it
    std::vector<PprofLocation> locations;
    PprofSamples samples;
    int64_t time_nanos = 0;
    int64_t duration_nanos = 0;
    int64_t period = 0;
};

// Decodes `bytes` (inflated) and checks it: the string table starts with "", every
// string index, mapping, location and function id refers to an entry, ids are unique
// and non-zero, every sample has one value per sample type. Labels, comments and
// drop_frames are not kept. An error names `source` and what is wrong. The samples are
// read one at a time in a pass of their own, into PprofSamples: beside `bytes`, reading
// holds the tables (mappings, locations, functions, strings) and the flat samples.
Result<PprofFile> read_pprof(std::string_view bytes, std::string_view source);

} // namespace heapkit
