// SPDX-License-Identifier: MIT
#include "heapkit/emit/pprof_writer.hpp"

#include "heapkit/emit/allocator_frames.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/utf8.hpp"
#include "profile.pb.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>
#include <unordered_map>

namespace heapkit {
namespace {

namespace pb = perftools::profiles;

// string_table with index 0 = "" as pprof requires.
class StringTable {
public:
    explicit StringTable(pb::Profile& out)
        : m_out(out) {
        intern("");
    }
    int64_t intern(std::string_view text) {
        auto [it, inserted] = m_index.try_emplace(std::string(text), m_out.string_table_size());
        if (inserted) {
            m_out.add_string_table(valid_utf8(it->first)); // proto3 strings must be UTF-8
        }
        return it->second;
    }

private:
    pb::Profile& m_out;
    std::unordered_map<std::string, int64_t> m_index;
};

// Function ids, one per distinct (name, system_name, file, start_line).
class FunctionTable {
public:
    FunctionTable(pb::Profile& out, StringTable& strings)
        : m_out(out)
        , m_strings(strings) {}
    uint64_t intern(const Frame& frame) {
        auto key = std::tie(frame.name, frame.system_name, frame.file, frame.start_line);
        auto it = m_ids.find(key);
        if (it != m_ids.end()) {
            return it->second;
        }
        pb::Function* function = m_out.add_function();
        function->set_id(static_cast<uint64_t>(m_out.function_size()));
        function->set_name(m_strings.intern(frame.name));
        function->set_system_name(m_strings.intern(frame.system_name));
        function->set_filename(m_strings.intern(frame.file));
        function->set_start_line(frame.start_line);
        m_ids.emplace(std::tuple{frame.name, frame.system_name, frame.file, frame.start_line},
                      function->id());
        return function->id();
    }

private:
    using Key = std::tuple<std::string, std::string, std::string, uint32_t>;
    pb::Profile& m_out;
    StringTable& m_strings;
    std::map<Key, uint64_t, std::less<>> m_ids;
};

std::vector<SampleType> sample_types_of(const Profile& profile) {
    if (profile.has_accum) {
        return {SampleType::alloc_objects, SampleType::alloc_space, SampleType::inuse_objects,
                SampleType::inuse_space};
    }
    return {SampleType::inuse_objects, SampleType::inuse_space};
}

void add_header(pb::Profile& out, StringTable& strings, const Profile& profile,
                const PprofOptions& options, const std::vector<SampleType>& types) {
    for (SampleType type : types) {
        pb::ValueType* value_type = out.add_sample_type();
        value_type->set_type(strings.intern(name_of(type)));
        value_type->set_unit(strings.intern(unit_of(type)));
    }
    out.mutable_period_type()->set_type(strings.intern("space"));
    out.mutable_period_type()->set_unit(strings.intern("bytes"));
    out.set_period(static_cast<int64_t>(profile.period));
    out.set_default_sample_type(strings.intern(name_of(options.default_type)));
    if (!options.keep_allocator_frames) {
        out.set_drop_frames(strings.intern(allocator_frames_regex()));
    }
    auto now = std::chrono::system_clock::now().time_since_epoch();
    out.set_time_nanos(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
    for (const std::string& source : profile.sources) {
        out.add_comment(strings.intern("source: " + source));
    }
    for (const std::string& comment : options.comments) {
        out.add_comment(strings.intern(comment));
    }
}

void add_mappings(pb::Profile& out, StringTable& strings, const Profile& profile) {
    for (const Module& module : profile.modules) {
        pb::Mapping* mapping = out.add_mapping();
        mapping->set_id(static_cast<uint64_t>(out.mapping_size()));
        mapping->set_memory_start(module.start);
        mapping->set_memory_limit(module.limit);
        mapping->set_file_offset(module.file_offset);
        mapping->set_filename(strings.intern(module.path));
        mapping->set_build_id(strings.intern(module.build_id));
        mapping->set_has_functions(module.has_functions);
        mapping->set_has_filenames(module.has_filenames);
        mapping->set_has_line_numbers(module.has_line_numbers);
        mapping->set_has_inline_frames(module.has_inline_frames);
    }
}

void add_locations(pb::Profile& out, StringTable& strings, const Profile& profile) {
    FunctionTable functions(out, strings);
    for (const Location& location : profile.locations) {
        pb::Location* entry = out.add_location();
        entry->set_id(static_cast<uint64_t>(out.location_size()));
        entry->set_mapping_id(location.module == no_module ? 0 : location.module + 1);
        entry->set_address(location.address);
        for (const Frame& frame : location.frames) {
            pb::Line* line = entry->add_line();
            line->set_function_id(functions.intern(frame));
            line->set_line(frame.line);
            line->set_column(frame.column);
        }
    }
}

void add_samples(pb::Profile& out, StringTable& strings, const Profile& profile,
                 const std::vector<SampleType>& types, const PprofOptions& options) {
    int64_t thread_key = profile.thread_labels.empty() ? 0 : strings.intern("thread");
    for (const Sample& sample : profile.samples) {
        pb::Sample* entry = out.add_sample();
        // drop_frames cannot name what a stripped jemalloc leaves unnamed: cut those here,
        // keeping at least one location so that the sample still has a place.
        std::span<const uint32_t> locations = profile.locations_of(sample);
        size_t skip =
            options.keep_allocator_frames ? 0 : allocator_module_prefix(profile, locations);
        skip = std::min(skip, locations.size() - (locations.empty() ? 0 : 1));
        for (size_t l = skip; l < locations.size(); ++l) {
            entry->add_location_id(locations[l] + 1);
        }
        for (SampleType type : types) {
            entry->add_value(value_of(sample.values, type));
        }
        if (sample.thread >= 0) {
            pb::Label* label = entry->add_label();
            label->set_key(thread_key);
            label->set_str(
                strings.intern(profile.thread_labels[static_cast<size_t>(sample.thread)]));
        }
    }
}

} // namespace

std::string encode_pprof(const Profile& profile, const PprofOptions& options) {
    pb::Profile out;
    StringTable strings(out);
    std::vector<SampleType> types = sample_types_of(profile);
    add_header(out, strings, profile, options, types);
    add_mappings(out, strings, profile);
    add_locations(out, strings, profile);
    add_samples(out, strings, profile, types, options);
    return out.SerializeAsString();
}

std::string write_pprof(const Profile& profile, const PprofOptions& options) {
    return gzip(encode_pprof(profile, options), options.compress_level);
}

} // namespace heapkit
