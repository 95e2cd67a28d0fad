// SPDX-License-Identifier: MIT
#include "heapkit/model/build_profile.hpp"

#include "heapkit/unsample/unsample.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace heapkit {
namespace {

// A dump's executable mappings, sorted by start, each with its Module index.
struct AddressSpace {
    struct Range {
        uint64_t start;
        uint64_t end;
        uint32_t module;
    };
    std::vector<Range> ranges;

    uint32_t module_of(uint64_t runtime) const {
        auto it = std::upper_bound(ranges.begin(), ranges.end(), runtime,
                                   [](uint64_t a, const Range& r) { return a < r.start; });
        if (it == ranges.begin()) {
            return no_module;
        }
        --it;
        return runtime < it->end ? it->module : no_module;
    }
};

std::vector<Frame> frames_from_chain(const std::vector<std::string>& chain, StringPool& strings) {
    std::vector<Frame> frames;
    // jeprof lists outermost first; a Location wants innermost first.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        std::string_view name = strings.intern(*it);
        frames.push_back(Frame{name, name, {}, 0, 0, 0});
    }
    return frames;
}

// Per file a dump maps, the least size the file must have to hold every page mapped from
// it: a mapping's last page holds at least one byte of the file (ld.so maps a segment's
// file bytes, its bss beyond them anonymously). The page size is taken as the largest
// power of two, up to 64 KiB, that the mapping's address, offset and length are all
// multiples of: never smaller than the kernel's, so the bound never asks too much.
std::map<std::string_view, uint64_t> least_file_sizes(const RawDump& dump) {
    std::map<std::string_view, uint64_t> sizes;
    for (const MapEntry& entry : dump.maps) {
        if (entry.path.empty() || entry.path.front() == '[' || entry.end <= entry.start) {
            continue;
        }
        uint64_t length = entry.end - entry.start;
        uint64_t aligned = entry.start | entry.file_offset | length | (uint64_t{1} << 16);
        uint64_t page = uint64_t{1} << std::countr_zero(aligned);
        uint64_t& least = sizes[entry.path];
        least = std::max(least, entry.file_offset + length - page + 1);
    }
    return sizes;
}

// A location's identity: its module and lookup address.
struct LocationKey {
    uint64_t address;
    uint32_t module;
    bool operator==(const LocationKey&) const = default;
};

struct LocationKeyHash {
    size_t operator()(const LocationKey& key) const {
        return static_cast<size_t>(
            (key.address ^ uint64_t{key.module} << 48) * 0x9e3779b97f4a7c15u >> 16);
    }
};

class ProfileBuilder {
public:
    explicit ProfileBuilder(const BuildOptions& options)
        : m_options(options) {}

    void add_modules(const std::vector<RawDump>& dumps);
    void reserve(const std::vector<RawDump>& dumps);
    void add_dump(const RawDump& dump, const AddressSpace& space);
    const AddressSpace& space(size_t dump) const { return m_spaces[dump]; }
    Profile take() { return std::move(m_profile); }

private:
    uint32_t intern_location(const RawDump& dump, uint32_t module, uint64_t address);
    int32_t intern_thread(const RawDump& dump, uint64_t uid);
    void add_stack(const RawDump& dump, const RawStack& stack, std::span<const uint32_t> locations);

    BuildOptions m_options;
    Profile m_profile;
    std::vector<AddressSpace> m_spaces;
    std::unordered_map<LocationKey, uint32_t, LocationKeyHash> m_location_ids;
    std::unordered_map<std::string, int32_t> m_thread_ids;
    std::unordered_map<uint64_t, int32_t> m_dump_threads; // the current dump's uids
    std::vector<uint32_t> m_locations;                    // one stack's, reused
    uint32_t m_dump = 0;                                  // the current dump's index
};

// What one more dump that maps `module` says of its file.
void note_dump(Module& module, int64_t dump_nanos, uint64_t least_size) {
    if (dump_nanos != 0 && (module.dumped_nanos == 0 || dump_nanos < module.dumped_nanos)) {
        module.dumped_nanos = dump_nanos;
    }
    module.least_file_size = std::max(module.least_file_size, least_size);
}

void ProfileBuilder::add_modules(const std::vector<RawDump>& dumps) {
    using Key = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;
    std::map<Key, uint32_t> known;
    // Two passes so that every dump's main executable comes before any library.
    std::vector<std::vector<std::pair<const MapEntry*, bool>>> wanted(dumps.size());
    for (size_t d = 0; d < dumps.size(); ++d) {
        std::string main = dumps[d].main_path();
        for (const MapEntry& entry : dumps[d].maps) {
            if (entry.executable && !entry.path.empty() && entry.end > entry.start) {
                wanted[d].emplace_back(&entry, entry.path == main);
            }
        }
    }
    m_spaces.resize(dumps.size());
    for (bool main_pass : {true, false}) {
        for (size_t d = 0; d < dumps.size(); ++d) {
            std::map<std::string_view, uint64_t> least_sizes = least_file_sizes(dumps[d]);
            for (auto [entry, is_main] : wanted[d]) {
                if (is_main != main_pass) {
                    continue;
                }
                Key key{entry->path, entry->start, entry->end, entry->file_offset};
                auto [it, inserted] =
                    known.emplace(key, static_cast<uint32_t>(m_profile.modules.size()));
                if (inserted) {
                    Module module;
                    module.path = entry->path;
                    module.start = entry->start;
                    module.limit = entry->end;
                    module.file_offset = entry->file_offset;
                    module.deleted = entry->deleted;
                    module.is_main = is_main;
                    m_profile.modules.push_back(std::move(module));
                }
                note_dump(m_profile.modules[it->second], dumps[d].modified_nanos,
                          least_sizes[entry->path]);
                m_spaces[d].ranges.push_back({entry->start, entry->end, it->second});
            }
        }
    }
    for (AddressSpace& space : m_spaces) {
        std::sort(space.ranges.begin(), space.ranges.end(),
                  [](const auto& a, const auto& b) { return a.start < b.start; });
    }
}

void ProfileBuilder::reserve(const std::vector<RawDump>& dumps) {
    size_t samples = 0;
    size_t locations = 0;
    for (const RawDump& dump : dumps) {
        samples += m_options.per_thread ? dump.stacks.size() + dump.stack_threads.size()
                                        : dump.stacks.size();
        locations += dump.frames.size();
    }
    m_profile.samples.reserve(samples);
    m_profile.sample_locations.reserve(locations);
}

uint32_t ProfileBuilder::intern_location(const RawDump& dump, uint32_t module, uint64_t address) {
    auto [it, inserted] = m_location_ids.emplace(LocationKey{address, module},
                                                 static_cast<uint32_t>(m_profile.locations.size()));
    if (inserted) {
        Location location{address, module, {}};
        if (auto named = dump.jeprof_symbols.find(address); named != dump.jeprof_symbols.end()) {
            location.frames = frames_from_chain(named->second, *m_profile.strings);
        }
        m_profile.locations.push_back(std::move(location));
    }
    return it->second;
}

int32_t ProfileBuilder::intern_thread(const RawDump& dump, uint64_t uid) {
    // Once per thread of the dump, not once per thread line: labels are strings.
    auto [known, first_time] = m_dump_threads.try_emplace(uid, -1);
    if (!first_time) {
        return known->second;
    }
    auto named = dump.thread_names.find(uid);
    std::string label = named != dump.thread_names.end() ? named->second : fmt::format("t{}", uid);
    auto [it, inserted] =
        m_thread_ids.emplace(label, static_cast<int32_t>(m_profile.thread_labels.size()));
    if (inserted) {
        m_profile.thread_labels.push_back(std::move(label));
    }
    known->second = it->second;
    return it->second;
}

bool is_zero(const HeapValues& values) {
    return values.alloc_objects == 0 && values.alloc_space == 0 && values.inuse_objects == 0 &&
           values.inuse_space == 0;
}

// One sample for the stack, or one per thread line; the thread samples of one stack share
// its range of locations. Samples with nothing in them are left out.
void ProfileBuilder::add_stack(const RawDump& dump, const RawStack& stack,
                               std::span<const uint32_t> locations) {
    size_t first = m_profile.sample_locations.size();
    auto count = static_cast<uint32_t>(locations.size());
    bool stored = false;
    auto add = [&](const HeapValues& values, int32_t thread) {
        if (is_zero(values)) {
            return;
        }
        if (!stored) {
            m_profile.sample_locations.append(locations);
            stored = true;
        }
        m_profile.samples.push_back(Sample{values, first, count, thread, m_dump});
    };
    if (!m_options.per_thread || stack.thread_count == 0) {
        add(unsample(stack.total, dump.sample_period), -1);
        return;
    }
    for (const ThreadCounts& thread : dump.threads_of(stack)) {
        add(unsample(thread.counts, dump.sample_period), intern_thread(dump, thread.thread_uid));
    }
}

void ProfileBuilder::add_dump(const RawDump& dump, const AddressSpace& space) {
    m_dump = static_cast<uint32_t>(m_profile.sources.size());
    m_profile.sources.push_back(dump.source);
    m_profile.has_accum = m_profile.has_accum || dump.has_accum();
    m_dump_threads.clear();
    // Each address id is placed in its module and interned once per role: as a leaf it is
    // looked up as it is; a return address points after the call, so it is moved back
    // into the call instruction.
    constexpr uint32_t unknown = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> as_leaf(dump.addresses.size(), unknown);
    std::vector<uint32_t> as_return(dump.addresses.size(), unknown);
    auto location_of = [&](uint32_t id, bool leaf) {
        uint32_t& known = (leaf ? as_leaf : as_return)[id];
        if (known == unknown) {
            uint64_t address = dump.addresses[id];
            if (!leaf && address > 0) {
                --address;
            }
            known = intern_location(dump, space.module_of(address), address);
        }
        return known;
    };
    for (const RawStack& stack : dump.stacks) {
        std::span<const uint32_t> ids = dump.frames_of(stack);
        m_locations.clear();
        for (size_t i = 0; i < ids.size(); ++i) {
            m_locations.push_back(location_of(ids[i], i == 0));
        }
        add_stack(dump, stack, m_locations);
    }
}

// The earliest and latest known time of the dumps.
void set_time_span(Profile& profile, const std::vector<RawDump>& dumps) {
    int64_t first = 0;
    int64_t last = 0;
    for (const RawDump& dump : dumps) {
        if (dump.modified_nanos == 0) {
            continue;
        }
        first = first == 0 ? dump.modified_nanos : std::min(first, dump.modified_nanos);
        last = std::max(last, dump.modified_nanos);
    }
    profile.time_nanos = first;
    profile.duration_nanos = last - first;
}

} // namespace

Profile build_profile(const std::vector<RawDump>& dumps, const BuildOptions& options) {
    ProfileBuilder builder(options);
    builder.add_modules(dumps);
    builder.reserve(dumps);
    for (size_t d = 0; d < dumps.size(); ++d) {
        builder.add_dump(dumps[d], builder.space(d));
    }
    Profile profile = builder.take();
    if (!dumps.empty()) {
        profile.period = dumps.front().sample_period;
    }
    set_time_span(profile, dumps);
    return profile;
}

} // namespace heapkit
