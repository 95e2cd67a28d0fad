// SPDX-License-Identifier: MIT
#include "heapkit/model/build_profile.hpp"

#include "heapkit/model/address_space.hpp"
#include "heapkit/unsample/unsample.hpp"
#include "heapkit/util/huge_pages.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace heapkit {
namespace {

std::vector<Frame> frames_from_chain(const std::vector<std::string>& chain, StringPool& strings) {
    std::vector<Frame> frames;
    // jeprof lists outermost first; a Location wants innermost first.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        std::string_view name = strings.intern(*it);
        frames.push_back(Frame{name, name, {}, 0, 0, 0});
    }
    return frames;
}

// One stack frame as a stream keeps it until the dump's maps are known: its address id,
// with this bit set for a return address (every frame but a stack's first).
constexpr uint32_t return_bit = uint32_t{1} << 31;

bool is_zero(const HeapValues& values) {
    return values.alloc_objects == 0 && values.alloc_space == 0 && values.inuse_objects == 0 &&
           values.inuse_space == 0;
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

// What the stream keeps of one dump besides its samples.
struct ProfileStream::Dump {
    uint64_t period = 1;
    std::unordered_map<uint64_t, std::string> thread_names;
    size_t first_location = 0; // its stacks' frames in sample_locations start here
};

ProfileStream::ProfileStream(const BuildOptions& options)
    : m_options(options) {}

ProfileStream::ProfileStream(ProfileStream&&) noexcept = default;
ProfileStream& ProfileStream::operator=(ProfileStream&&) noexcept = default;
ProfileStream::~ProfileStream() = default;

void ProfileStream::reserve(size_t samples, size_t frames) {
    m_profile.samples.reserve(samples);
    m_profile.sample_locations.reserve(frames);
}

void ProfileStream::begin(const RawDump& dump) {
    m_dump = static_cast<uint32_t>(m_dumps.size());
    m_dumps.push_back(
        Dump{dump.sample_period, dump.thread_names, m_profile.sample_locations.size()});
    m_profile.sources.push_back(dump.source);
    m_profile.has_accum = m_profile.has_accum || dump.total.has_accum();
    m_dump_threads.clear();
}

int32_t ProfileStream::intern_thread(uint64_t uid) {
    // Once per thread of the dump, not once per thread line: labels are strings.
    auto [known, first_time] = m_dump_threads.try_emplace(uid, -1);
    if (!first_time) {
        return known->second;
    }
    const auto& names = m_dumps.back().thread_names;
    auto named = names.find(uid);
    std::string label = named != names.end() ? named->second : fmt::format("t{}", uid);
    auto [it, inserted] =
        m_thread_ids.emplace(label, static_cast<int32_t>(m_profile.thread_labels.size()));
    if (inserted) {
        m_profile.thread_labels.push_back(std::move(label));
    }
    known->second = it->second;
    return it->second;
}

// One sample for the stack, or one per thread line; the thread samples of one stack share
// its range of locations. Samples with nothing in them are left out; the frames of a
// stack left out whole stay until finish() has numbered its locations (the numbers follow
// every stack's frames, as read), then go.
Result<void> ProfileStream::add(std::span<const uint32_t> frames, const SampledCounts& total,
                                std::span<const ThreadCounts> threads) {
    size_t first = m_profile.sample_locations.size();
    for (size_t i = 0; i < frames.size(); ++i) {
        if ((frames[i] & return_bit) != 0) {
            return fail("more than 2^31 distinct frame addresses in one dump");
        }
        m_profile.sample_locations.push_back(i == 0 ? frames[i] : frames[i] | return_bit);
    }
    m_profile.has_accum = m_profile.has_accum || total.has_accum();
    auto count = static_cast<uint32_t>(frames.size());
    uint64_t period = m_dumps.back().period;
    bool stored = false;
    auto sample = [&](const HeapValues& values, int32_t thread) {
        if (!is_zero(values)) {
            m_profile.samples.push_back(Sample{values, first, count, thread, m_dump});
            stored = true;
        }
    };
    if (!m_options.per_thread || threads.empty()) {
        sample(unsample(total, period), -1);
    } else {
        for (const ThreadCounts& thread : threads) {
            sample(unsample(thread.counts, period), intern_thread(thread.thread_uid));
        }
    }
    if (!stored && count != 0) {
        m_unkept.push_back({first, first + count});
    }
    return {};
}

uint32_t ProfileStream::intern_location(const RawDump& dump, uint32_t module, uint64_t address) {
    bool added = false;
    uint32_t id = m_location_ids.id_of(module, address, m_profile.locations, added);
    if (added) {
        Location location{address, {}, module};
        // Most dumps carry no names: no lookup (a division) for each of millions of
        // locations then.
        const JeprofSymbols& names = dump.jeprof_symbols;
        if (auto named = names.empty() ? names.end() : names.find(address); named != names.end()) {
            location.frames = frames_from_chain(named->second, *m_profile.strings);
        }
        m_profile.locations.push_back(std::move(location));
    }
    return id;
}

// Each address id is placed in its module and interned: as a leaf it is looked up as it
// is; a return address points after the call, so it is moved back into the call
// instruction. A return address's location is remembered by its id, as the frames of
// many stacks meet it again; a leaf's is asked of the table each time: a stack has one
// leaf, among few distinct ones, and an array for them took 4 bytes an address (100 MB of
// a dump of 25 M addresses, BENCHMARKS.md, issue 47). The frames go in batches: the
// table's slots of a batch's new frames are loaded together, then interned in order (the
// ids as before), so that tens of millions of cache misses overlap.
void ProfileStream::place_frames(const RawDump& dump, const AddressSpace& space, size_t first,
                                 size_t end) {
    constexpr uint32_t unknown = std::numeric_limits<uint32_t>::max();
    constexpr size_t batch = 32;
    struct Key {
        uint32_t module;
        uint64_t address; // runtime lookup address
    };
    std::vector<uint32_t> as_return(dump.addresses.size(), unknown);
    uint32_t* frames = m_profile.sample_locations.data();
    std::array<Key, batch> keys;
    for (size_t start = first; start < end; start += batch) {
        size_t stop = std::min(end, start + batch);
        for (size_t f = start; f < stop; ++f) {
            uint32_t id = frames[f] & ~return_bit;
            bool is_return = (frames[f] & return_bit) != 0;
            if (is_return && as_return[id] != unknown) {
                continue;
            }
            uint64_t address = dump.addresses[id];
            address -= is_return && address > 0 ? 1 : 0;
            keys[f - start] = {space.module_of(address), address};
            m_location_ids.prefetch(keys[f - start].module, address);
        }
        for (size_t f = start; f < stop; ++f) {
            const Key& key = keys[f - start];
            if ((frames[f] & return_bit) == 0) {
                frames[f] = intern_location(dump, key.module, key.address);
                continue;
            }
            uint32_t& known = as_return[frames[f] & ~return_bit];
            if (known == unknown) { // unknown in the first walk too: its key is there
                known = intern_location(dump, key.module, key.address);
            }
            frames[f] = known;
        }
    }
}

// Takes the frames of the stacks left without a sample out of sample_locations.
void ProfileStream::drop_unkept() {
    if (m_unkept.empty()) {
        return;
    }
    PodVector<uint32_t>& frames = m_profile.sample_locations;
    size_t kept = m_unkept.front().first;
    size_t from = m_unkept.front().first;
    for (size_t u = 0; u < m_unkept.size(); ++u) {
        size_t until = u + 1 < m_unkept.size() ? m_unkept[u + 1].first : frames.size();
        from = m_unkept[u].second;
        std::memmove(frames.data() + kept, frames.data() + from, (until - from) * sizeof(uint32_t));
        kept += until - from;
    }
    frames.resize(kept);
    size_t u = 0;
    size_t removed = 0;
    for (Sample& sample : m_profile.samples) {
        while (u < m_unkept.size() && m_unkept[u].first < sample.first_location) {
            removed += m_unkept[u].second - m_unkept[u].first;
            ++u;
        }
        sample.first_location -= removed;
    }
    m_unkept.clear();
}

Profile ProfileStream::finish(const std::vector<RawDump>& dumps) {
    std::vector<AddressSpace> spaces = add_modules(m_profile, dumps);
    size_t most = 0;
    for (const RawDump& dump : dumps) {
        most += 2 * dump.addresses.size(); // as a leaf and as a return address
    }
    // Untouched room takes no memory; huge pages, as the writers read the locations in
    // no order.
    m_profile.locations.reserve(most);
    advise_huge_pages(m_profile.locations.data(), most * sizeof(Location));
    for (size_t d = 0; d < dumps.size() && d < m_dumps.size(); ++d) {
        size_t end = d + 1 < m_dumps.size() ? m_dumps[d + 1].first_location
                                            : m_profile.sample_locations.size();
        place_frames(dumps[d], spaces[d], m_dumps[d].first_location, end);
    }
    drop_unkept();
    if (!dumps.empty()) {
        m_profile.period = dumps.front().sample_period;
    }
    set_time_span(m_profile, dumps);
    return std::move(m_profile);
}

Profile build_profile(const std::vector<RawDump>& dumps, const BuildOptions& options) {
    ProfileStream stream(options);
    size_t samples = 0;
    size_t frames = 0;
    for (const RawDump& dump : dumps) {
        samples += options.per_thread ? dump.stacks.size() + dump.stack_threads.size()
                                      : dump.stacks.size();
        frames += dump.frames.size();
    }
    stream.reserve(samples, frames);
    for (const RawDump& dump : dumps) {
        stream.begin(dump);
        for (const RawStack& stack : dump.stacks) {
            // Fails only past 2^31 addresses, which no dump held in memory reaches; the
            // loader's dumps stream, and say where.
            auto added = stream.add(dump.frames_of(stack), stack.total, dump.threads_of(stack));
            if (!added) {
                throw std::length_error(fmt::format("{}: {}", dump.source, added.error().message));
            }
        }
    }
    return stream.finish(dumps);
}

} // namespace heapkit
