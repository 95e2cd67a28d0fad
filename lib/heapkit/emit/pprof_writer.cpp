// SPDX-License-Identifier: MIT
#include "heapkit/emit/pprof_writer.hpp"

#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/stacks/clone_names.hpp"
#include "heapkit/emit/stacks/dump_labels.hpp"
#include "heapkit/emit/stacks/standard_frames.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/string_map.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/utf8.hpp"
#include "profile.pb.h"

#include <algorithm>
#include <chrono>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <map>
#include <stdexcept>
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
        if (auto it = m_index.find(text); it != m_index.end()) {
            return it->second;
        }
        int64_t id = m_out.string_table_size();
        m_out.add_string_table(valid_utf8(text)); // proto3 strings must be UTF-8
        m_index.emplace(text, id);
        return id;
    }

private:
    pb::Profile& m_out;
    StringMap<int64_t> m_index;
};

// Function ids, one per distinct (name, system_name, file, start_line).
class FunctionTable {
public:
    FunctionTable(pb::Profile& out, StringTable& strings, bool merge_clones)
        : m_out(out)
        , m_strings(strings)
        , m_merge_clones(merge_clones) {}
    uint64_t intern(const Frame& frame) {
        // A clone's symbol stays the system name: only the name it shows by is merged.
        std::string_view name = m_merge_clones ? without_clone_suffixes(frame.name) : frame.name;
        auto key = std::tie(name, frame.system_name, frame.file, frame.start_line);
        auto it = m_ids.find(key);
        if (it != m_ids.end()) {
            return it->second;
        }
        pb::Function* function = m_out.add_function();
        function->set_id(static_cast<uint64_t>(m_out.function_size()));
        function->set_name(m_strings.intern(name));
        function->set_system_name(m_strings.intern(frame.system_name));
        function->set_filename(m_strings.intern(frame.file));
        function->set_start_line(frame.start_line);
        m_ids.emplace(std::tuple{name, frame.system_name, frame.file, frame.start_line},
                      function->id());
        return function->id();
    }

private:
    // Views of the profile's strings, which outlive the writer.
    using Key = std::tuple<std::string_view, std::string_view, std::string_view, uint32_t>;
    pb::Profile& m_out;
    StringTable& m_strings;
    bool m_merge_clones;
    std::map<Key, uint64_t, std::less<>> m_ids;
};

std::vector<SampleType> sample_types_of(const Profile& profile) {
    if (!profile.named_types.empty()) { // a pprof's: the slots it fills, as it names them
        std::vector<SampleType> types;
        for (size_t slot = 0; slot < profile.named_types.size(); ++slot) {
            if (!profile.named_types[slot].name.empty()) {
                types.push_back(static_cast<SampleType>(slot));
            }
        }
        return types;
    }
    if (profile.from_log) { // nothing is in use: what was allocated, and the log's measures
        std::vector<SampleType> types = {SampleType::alloc_objects, SampleType::alloc_space};
        types.insert(types.end(), std::begin(log_sample_types), std::end(log_sample_types));
        return types;
    }
    if (profile.has_accum) {
        return {SampleType::alloc_objects, SampleType::alloc_space, SampleType::inuse_objects,
                SampleType::inuse_space};
    }
    return {SampleType::inuse_objects, SampleType::inuse_space};
}

void add_header(pb::Profile& out, StringTable& strings, const Profile& profile,
                const PprofOptions& options, const std::vector<SampleType>& types,
                std::span<const ExtraSampleType> extra) {
    for (SampleType type : types) {
        pb::ValueType* value_type = out.add_sample_type();
        value_type->set_type(strings.intern(sample_name(profile, type)));
        value_type->set_unit(strings.intern(sample_unit(profile, type)));
    }
    for (const ExtraSampleType& type : extra) {
        pb::ValueType* value_type = out.add_sample_type();
        value_type->set_type(strings.intern(type.type));
        value_type->set_unit(strings.intern(type.unit));
    }
    bool cpu = options.cpu.has_value();
    out.mutable_period_type()->set_type(strings.intern(cpu ? "cpu" : "space"));
    out.mutable_period_type()->set_unit(strings.intern(cpu ? "nanoseconds" : "bytes"));
    out.set_period(cpu ? options.cpu->period_nanos : static_cast<int64_t>(profile.period));
    out.set_default_sample_type(
        strings.intern(cpu ? "cpu" : sample_name(profile, options.default_type)));
    // The stacks stay whole: pprof cuts what drop_frames names, as the other views do.
    bool keep = options.frames.keep_allocator_frames || cpu;
    std::string drop = drop_frames_regex(keep, options.frames.drop_frames);
    if (std::string standard = keep ? "" : standard_drop_frames(profile, options.frames);
        !standard.empty()) {
        drop += (drop.empty() ? "" : "|") + standard;
    }
    out.set_drop_frames(strings.intern(drop));
    if (profile.time_nanos != 0) {
        out.set_time_nanos(profile.time_nanos);
        out.set_duration_nanos(profile.duration_nanos);
    } else { // dumps read from standard input or memory: the time of conversion
        auto now = std::chrono::system_clock::now().time_since_epoch();
        out.set_time_nanos(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
    }
    for (const std::string& source : profile.sources) {
        out.add_comment(strings.intern("source: " + source));
    }
    for (const std::string& comment : options.comments) {
        out.add_comment(strings.intern(comment));
    }
    for (const std::string& note : profile.notes) {
        out.add_comment(strings.intern(note));
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

void add_locations(pb::Profile& out, StringTable& strings, const Profile& profile,
                   const PprofOptions& options) {
    FunctionTable functions(out, strings, options.frames.merge_clones);
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

// Thread labels as string indexes, interned in the order the samples first name them.
struct ThreadStrings {
    int64_t key = 0;                // "thread" (PprofOptions::thread_label_key)
    std::vector<int64_t> by_thread; // per Profile::thread_labels entry; 0 until used
};

ThreadStrings intern_threads(StringTable& strings, const Profile& profile,
                             const PprofOptions& options) {
    ThreadStrings threads;
    threads.key = profile.thread_labels.empty() ? 0 : strings.intern(options.thread_label_key);
    threads.by_thread.assign(profile.thread_labels.size(), 0);
    for (const Sample& sample : profile.samples) {
        if (sample.thread >= 0 && threads.by_thread[static_cast<size_t>(sample.thread)] == 0) {
            threads.by_thread[static_cast<size_t>(sample.thread)] =
                strings.intern(profile.thread_labels[static_cast<size_t>(sample.thread)]);
        }
    }
    return threads;
}

// The "dump" label's key and each dump's label, as string indexes; none unless asked.
struct DumpStrings {
    int64_t key = 0;
    std::vector<int64_t> by_dump; // per Profile::sources entry
};

DumpStrings intern_dumps(StringTable& strings, const Profile& profile,
                         const PprofOptions& options) {
    DumpStrings dumps;
    if (options.dump_labels) {
        dumps.key = strings.intern("dump");
        for (const std::string& label : dump_labels(profile.sources)) {
            dumps.by_dump.push_back(strings.intern(label));
        }
    }
    return dumps;
}

// An upper bound of the bytes append_samples writes: varints take at most 10 bytes,
// lengths 5, tags 1; each label 6 + 22.
size_t samples_size_bound(const Profile& profile, size_t types, size_t labels) {
    size_t bound = 0;
    for (const Sample& sample : profile.samples) {
        bound += 6 + (6 + 10 * sample.location_count) + (6 + 10 * types) + labels * (6 + 22);
    }
    return bound;
}

// Appends every sample to the encoded Profile `out` as a field 2 (protobuf fields may
// come in any order), one reused pb::Sample at a time: a pb::Sample per sample, for a
// million samples, took four times the memory of the profile.
void append_samples(std::string& out, const Profile& profile, const std::vector<SampleType>& types,
                    std::span<const ExtraSampleType> extra, const PprofOptions& options,
                    const ThreadStrings& threads, const DumpStrings& dumps) {
    using google::protobuf::io::CodedOutputStream;
    constexpr uint32_t sample_tag = 2 << 3 | 2; // Profile.sample, length-delimited
    pb::Sample entry;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        const Sample& sample = profile.samples[s];
        entry.Clear();
        // drop_frames cannot name what a stripped jemalloc leaves unnamed: cut those here,
        // keeping at least one location so that the sample still has a place.
        std::span<const uint32_t> locations = profile.locations_of(sample);
        size_t skip = options.frames.keep_allocator_frames || options.cpu
                          ? 0
                          : allocator_module_prefix(profile, locations);
        skip = std::min(skip, locations.size() - (locations.empty() ? 0 : 1));
        for (size_t l = skip; l < locations.size(); ++l) {
            entry.add_location_id(locations[l] + 1);
        }
        for (SampleType type : types) {
            entry.add_value(value_of(profile, sample, type));
        }
        for (const ExtraSampleType& type : extra) {
            entry.add_value(type.values[s]);
        }
        if (sample.thread >= 0) {
            pb::Label* label = entry.add_label();
            label->set_key(threads.key);
            label->set_str(threads.by_thread[static_cast<size_t>(sample.thread)]);
        }
        if (!dumps.by_dump.empty()) {
            pb::Label* label = entry.add_label();
            label->set_key(dumps.key);
            label->set_str(dumps.by_dump[sample.dump]);
        }
        auto size = static_cast<uint32_t>(entry.ByteSizeLong());
        uint8_t head[10];
        uint8_t* end = CodedOutputStream::WriteTagToArray(sample_tag, head);
        end = CodedOutputStream::WriteVarint32ToArray(size, end);
        out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
        size_t at = out.size();
        out.resize(at + size);
        entry.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + at));
    }
}

std::vector<ExtraSampleType> cpu_sample_types(const CpuSampleTypes& cpu) {
    return {{"samples", "count", cpu.ticks}, {"cpu", "nanoseconds", cpu.nanos}};
}

} // namespace

std::string encode_pprof(const Profile& profile, const PprofOptions& options,
                         std::span<const ExtraSampleType> extra) {
    // Locations, lines, functions and strings come from one arena, freed at once: a
    // heap allocation each was the writer's largest cost at 100k locations.
    google::protobuf::Arena arena;
    pb::Profile& out = *google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
    StringTable strings(out);
    std::vector<SampleType> types = sample_types_of(profile);
    std::vector<ExtraSampleType> cpu_types;
    if (options.cpu) { // Go's two CPU types instead of the heap's four
        if (options.cpu->ticks.size() != profile.samples.size() ||
            options.cpu->nanos.size() != profile.samples.size()) {
            throw std::invalid_argument("CPU sample types need a value for every sample");
        }
        types.clear();
        cpu_types = cpu_sample_types(*options.cpu);
        extra = cpu_types;
    }
    add_header(out, strings, profile, options, types, extra);
    add_mappings(out, strings, profile);
    add_locations(out, strings, profile, options);
    ThreadStrings threads = intern_threads(strings, profile, options);
    DumpStrings dumps = intern_dumps(strings, profile, options);
    std::string bytes;
    // Only what is written is touched: the pages of a large allocation are mapped on
    // first write, so a generous bound costs address space, not memory, and no copy.
    bytes.reserve(out.ByteSizeLong() + samples_size_bound(profile, types.size() + extra.size(),
                                                          dumps.by_dump.empty() ? 1 : 2));
    out.AppendToString(&bytes);
    append_samples(bytes, profile, types, extra, options, threads, dumps);
    return bytes;
}

Result<std::string> write_pprof(const Profile& profile, const PprofOptions& options) {
    return catching([&]() -> Result<std::string> {
        return gzip(encode_pprof(profile, options), options.compress_level);
    });
}

} // namespace heapkit
