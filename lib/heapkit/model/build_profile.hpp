// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/location_ids.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/read/raw_dump.hpp"
#include "heapkit/read/stack_consumer.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace heapkit {

struct BuildOptions {
    bool per_thread = false; // one sample per (stack, thread) instead of per stack
};

// Unsamples and merges `dumps` into one Profile. Each dump's addresses are placed in
// that dump's own mappings (ASLR differs per process); return addresses (every frame
// but the first) are moved back by one so they point into the call instruction.
// Names a jeprof symbolized file carried are attached as the locations' frames. The
// profile's time is the earliest dump's, its duration the span to the latest.
// (ProfileStream does it; this feeds it the dumps' stacks.)
Profile build_profile(const std::vector<RawDump>& dumps, const BuildOptions& options);

struct AddressSpace;

// build_profile for dumps as they are parsed: each stack becomes its samples as the
// parser reads it (give the stream as the parser's StackConsumer), so that a dump's
// stacks are not held twice, once as read and once as samples; memory then grows with the
// samples and the distinct addresses, not with the file. The frames keep their address
// ids until finish() places them in modules: a dump's maps come after its stacks, and
// every dump's maps number the modules before any location is numbered.
class ProfileStream : public StackConsumer {
public:
    explicit ProfileStream(const BuildOptions& options);
    ProfileStream(ProfileStream&&) noexcept;
    ProfileStream& operator=(ProfileStream&&) noexcept;
    ~ProfileStream() override;

    // Room for this many samples and frames, when they are known beforehand.
    void reserve(size_t samples, size_t frames);

    void begin(const RawDump& dump) override;
    Result<void> add(std::span<const uint32_t> frames, const SampledCounts& total,
                     std::span<const ThreadCounts> threads) override;

    // The profile of the dumps begun, given again in the same order as parsed (their
    // stacks may be empty: their addresses, maps and symbols are what is used). Once.
    Profile finish(const std::vector<RawDump>& dumps);

private:
    struct Dump;

    int32_t intern_thread(uint64_t uid);
    uint32_t intern_location(const RawDump& dump, uint32_t module, uint64_t address);
    void place_frames(const RawDump& dump, const AddressSpace& space, size_t first, size_t end);
    void drop_unkept();

    BuildOptions m_options;
    Profile m_profile;
    std::vector<Dump> m_dumps;
    uint32_t m_dump = 0; // the current dump's index
    LocationIds m_location_ids;
    std::unordered_map<std::string, int32_t> m_thread_ids;
    std::unordered_map<uint64_t, int32_t> m_dump_threads; // the current dump's uids
    // Ranges [first, end) of sample_locations holding the frames of stacks that gave no
    // sample: their locations are numbered as the others', then they go.
    std::vector<std::pair<size_t, size_t>> m_unkept;
};

} // namespace heapkit
