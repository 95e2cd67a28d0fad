// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/string_pool.hpp"
#include "heapkit/unsample/heap_values.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/pod_vector.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

// One source-level frame at a code address. A Location holds a chain of them. Its texts
// are views into a StringPool that outlives it: in a Profile, the profile's `strings`.
struct Frame {
    std::string_view name;        // display name (demangled); empty when unknown
    std::string_view system_name; // name as the symbol table spells it (mangled)
    std::string_view file;        // source file, when known
    uint32_t line = 0;            // for inlined frames: the line inside this function
    uint32_t column = 0;
    uint32_t start_line = 0; // first line of the function, when known
};

// A location's chain of frames, innermost first, held through one pointer: an empty chain
// (every location of a dump whose addresses go unnamed, tens of millions in the largest)
// costs 8 bytes and no allocation, where a std::vector cost 24. A named location pays one
// allocation more; named locations are as many as the functions a program has.
class FrameList {
public:
    using value_type = Frame;
    using iterator = Frame*;
    using const_iterator = const Frame*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    FrameList() = default;
    FrameList(std::vector<Frame> frames) // NOLINT: implicit, as the vector it replaces
        : m_frames(frames.empty() ? nullptr
                                  : std::make_unique<std::vector<Frame>>(std::move(frames))) {}
    FrameList(std::initializer_list<Frame> frames)
        : FrameList(std::vector<Frame>(frames)) {}
    FrameList(const FrameList& other)
        : FrameList(other.m_frames ? *other.m_frames : std::vector<Frame>()) {}
    FrameList(FrameList&&) noexcept = default;
    FrameList& operator=(const FrameList& other) {
        if (this != &other) {
            *this = FrameList(other);
        }
        return *this;
    }
    FrameList& operator=(FrameList&&) noexcept = default;
    ~FrameList() = default;

    size_t size() const { return m_frames ? m_frames->size() : 0; }
    bool empty() const { return size() == 0; }
    Frame* data() { return m_frames ? m_frames->data() : nullptr; }
    const Frame* data() const { return m_frames ? m_frames->data() : nullptr; }
    iterator begin() { return data(); }
    iterator end() { return data() + size(); }
    const_iterator begin() const { return data(); }
    const_iterator end() const { return data() + size(); }
    reverse_iterator rbegin() { return reverse_iterator(end()); }
    reverse_iterator rend() { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
    Frame& operator[](size_t i) { return (*m_frames)[i]; }
    const Frame& operator[](size_t i) const { return (*m_frames)[i]; }
    Frame& front() { return m_frames->front(); }
    const Frame& front() const { return m_frames->front(); }
    Frame& back() { return m_frames->back(); }
    const Frame& back() const { return m_frames->back(); }
    operator std::span<const Frame>() const { return {data(), size()}; } // NOLINT

    void push_back(const Frame& frame) { vector().push_back(frame); }
    template <typename... Args> Frame& emplace_back(Args&&... args) {
        return vector().emplace_back(std::forward<Args>(args)...);
    }
    void clear() { m_frames.reset(); }

    // std::erase_if's, found by argument-dependent lookup.
    template <typename Predicate> friend size_t erase_if(FrameList& list, Predicate predicate) {
        if (!list.m_frames) {
            return 0;
        }
        size_t erased = std::erase_if(*list.m_frames, predicate);
        if (list.m_frames->empty()) {
            list.m_frames.reset();
        }
        return erased;
    }

private:
    std::vector<Frame>& vector() {
        if (!m_frames) {
            m_frames = std::make_unique<std::vector<Frame>>();
        }
        return *m_frames;
    }

    std::unique_ptr<std::vector<Frame>> m_frames; // null when empty
};

// An executable mapping of some dump. Identical mappings of several dumps are one Module.
struct Module {
    std::string path;         // as the dump names it, " (deleted)" removed
    uint64_t start = 0;       // runtime address
    uint64_t limit = 0;       // runtime address, exclusive
    uint64_t file_offset = 0; // file offset of `start`
    bool deleted = false;
    bool is_main = false;      // the program's own executable
    bool is_allocator = false; // jemalloc's own library: leaf frames in it are allocator frames
    std::string build_id;      // lower-case hex NT_GNU_BUILD_ID, when the file was read
    // What symbolization achieved for this module (pprof's has_* flags).
    bool has_functions = false;
    bool has_filenames = false;
    bool has_line_numbers = false;
    bool has_inline_frames = false;
    // What the dumps that map it say of the file, which they name without a build id: the
    // earliest of their modification times (ns since the Unix epoch; 0 when none is
    // known), and the least size, in bytes, a file must have to hold every page they map
    // of it (any permission). A file found now that is newer, or shorter, may be a build
    // made after the process ran (symbolize/later_builds.hpp).
    int64_t dumped_nanos = 0;
    uint64_t least_file_size = 0;

    // File offset of a runtime address inside this module.
    uint64_t file_offset_of(uint64_t runtime) const { return runtime - start + file_offset; }
};

inline constexpr uint32_t no_module = std::numeric_limits<uint32_t>::max();

// A unique code address. The largest dumps hold tens of millions, one per distinct frame
// address: its fields are ordered so that it takes 24 bytes.
struct Location {
    uint64_t address = 0;        // runtime lookup address: return addresses moved back by one
    FrameList frames;            // innermost first; empty when unnamed
    uint32_t module = no_module; // index into Profile::modules
    // No name reaches the address, and its one frame names its function by the module
    // and the ELF vaddr where the function starts ("varnishd!0x4a5c0", from the file's
    // call-frame information): the addresses of one function are one frame.
    bool anonymous = false;
};
static_assert(sizeof(Location) == 24);

// One stack's (or one stack and thread's) values. Its locations are a range of
// Profile::sample_locations: one array for all samples instead of one per sample.
struct Sample {
    HeapValues values;         // unsampled
    size_t first_location = 0; // index into Profile::sample_locations
    uint32_t location_count = 0;
    int32_t thread = -1; // index into Profile::thread_labels, or -1
    uint32_t dump = 0;   // the dump it came from: index into Profile::sources
    // Of an allocation log: index into Profile::log_samples (in what was padding).
    uint32_t log = no_log_sample;

    static constexpr uint32_t no_log_sample = std::numeric_limits<uint32_t>::max();
};

// One allocation's lifetime and what it stands for once unsampled.
struct Lifetime {
    uint64_t nanos = 0;
    double weight = 1; // unsampling's scale for its size
};

// What an allocation log says of one sample beyond its HeapValues.
struct LogSample {
    LogValues values;
    std::vector<Lifetime> lifetimes; // of each allocation, in the log's order
};

// A sample type as a pprof profile names it (model/pprof_profile.hpp).
struct NamedSampleType {
    std::string name; // e.g. "inuse_space", "samples", "cpu"; empty: a slot left unused
    std::string unit; // e.g. "bytes", "count", "nanoseconds"
};

// The unsampled, merged content of one or more dumps.
struct Profile {
    uint64_t period = 1;    // R of the first dump, bytes
    bool has_accum = false; // alloc_* values are meaningful
    std::vector<std::string> sources;
    // When the dumps were written (their files' modification times, ns since the Unix
    // epoch): the earliest, and the span to the latest. 0, 0 when no dump's time is known.
    int64_t time_nanos = 0;
    int64_t duration_nanos = 0;
    std::vector<Module> modules; // main executable(s) first
    std::vector<Location> locations;
    PodVector<Sample> samples;
    PodVector<uint32_t> sample_locations; // indexes into `locations`, sample after sample,
                                          // each leaf first; samples may share a range
    std::vector<std::string> thread_labels;
    // What a reader of any view of it should know, one line each, e.g. which modules are
    // stripped and how to get their names: pprof comments, a flame graph's subtitle.
    std::vector<std::string> notes;
    // Made from an allocation log (read/prof_log.hpp): alloc_* are the allocations freed
    // while it ran, inuse_* are 0, and the log's types are in log_samples.
    bool from_log = false;
    bool log_free_sites = false; // its samples are freeing stacks, not allocating ones
    std::vector<LogSample> log_samples;
    // Of a log: what it recorded of objects allocated before it began (jemalloc logs every
    // sampled object freed while it runs, whenever it was allocated), which is left out of
    // every figure: one sentence saying so, for the text and chart views (also in
    // `notes`); empty when there were none.
    std::string log_window_note;
    // Of a profile read from pprof: the name and unit of each of HeapValues' four slots
    // (by SampleType, alloc_objects to inuse_space) it fills with its own sample types,
    // kept as the file names them (a CPU profile's samples/count and cpu/nanoseconds);
    // empty for dumps, whose slots are the heap's four. Its named locations keep the
    // names it gave them: only the unnamed ones are symbolized.
    std::vector<NamedSampleType> named_types;
    // Of a pprof: the type its views show unless one is chosen (its default_sample_type,
    // else its last, as go tool pprof's).
    std::optional<SampleType> default_type;
    // The texts of every location's frames. Shared: a copy of the profile keeps the
    // texts its frames point to alive.
    std::shared_ptr<StringPool> strings = std::make_shared<StringPool>();

    // A sample's locations (indexes into `locations`), leaf first.
    std::span<const uint32_t> locations_of(const Sample& sample) const {
        return {sample_locations.data() + sample.first_location, sample.location_count};
    }

    // Appends a sample with its own copy of `location_ids`.
    void add_sample(std::span<const uint32_t> location_ids, const HeapValues& values,
                    int32_t thread = -1, uint32_t dump = 0) {
        samples.push_back(Sample{values, sample_locations.size(),
                                 static_cast<uint32_t>(location_ids.size()), thread, dump});
        sample_locations.append(location_ids);
    }
};

// A sample's value of `type`, a log's types included (0 where the profile has none).
inline int64_t value_of(const Profile& profile, const Sample& sample, SampleType type) {
    if (!is_log_type(type)) {
        return value_of(sample.values, type);
    }
    return sample.log < profile.log_samples.size()
               ? value_of(profile.log_samples[sample.log].values, type)
               : 0;
}

// A sample type's name and unit as `profile`'s views say them: a pprof's own, else
// name_of and unit_of.
std::string_view sample_name(const Profile& profile, SampleType type);
std::string_view sample_unit(const Profile& profile, SampleType type);

// The type `name` chooses in `profile` (a pprof's own names, or the heap's and a log's):
// nullopt when it has none of that name.
std::optional<SampleType> sample_type_named(const Profile& profile, std::string_view name);

// An error, naming the first source, when `name` chooses no type of `profile`: the
// types it has listed.
Result<SampleType> sample_type_of(const Profile& profile, std::string_view name);

// An error naming both sources when `a` and `b` (a profile and its base) disagree on what
// their samples measure: a pprof's sample types (names and units) against another's, or
// against a dump's.
Result<void> check_same_types(const Profile& a, const Profile& b);

// An error when `type` needs accumulated counts and the profile has none, when it is a
// log's type and the profile is a dump's, or an in-use type and the profile a log's.
Result<void> check_sample_type(const Profile& profile, SampleType type);

// An error naming the dump where a sample type's total over all samples passes what a
// signed 64-bit value holds (pprof's int64: its totals and percentages would wrap, as
// "-1B" of a 2^64-byte total). No real heap comes near 8 EiB: such a dump is damaged.
Result<void> check_totals(const Profile& profile);

// Which stacks the views keep, in pprof's vocabulary: regexes in RE2's syntax
// (pprof's) searched in
// every frame's function name (as pprof's -focus and -ignore), and in the address text of
// a location without a name ("libfoo.so+0x1a2b"), as the views show it.
struct StackFilter {
    std::string focus;  // keep only stacks through a matching frame; empty: all
    std::string ignore; // leave out stacks through a matching frame; empty: none
    // Take matching frames out of every stack, keeping their callers and callees
    // (pprof's -hide): a wrapper or an STL layer between two frames one wants; empty: none.
    std::string hide;
};

// Whether each of a filter's patterns matched some frame of the profile (true for an
// empty one): a pattern that matches nothing is most likely a typo.
struct FilterMatches {
    bool focus = true;
    bool ignore = true;
    bool hide = true;
};

// Removes the samples `filter` leaves out; an error for an invalid regex.
Result<FilterMatches> filter_stacks(Profile& profile, const StackFilter& filter);

// `profile` less `base`: base's modules and locations added, and its samples with every
// value negated (pprof allows negative values; go tool pprof's -diff_base does the same).
// Views match frames by name, so a base from another run of the program (other addresses)
// subtracts where the functions are the same. alloc_* stay meaningful only when both have
// them.
Result<void> subtract_base(Profile& profile, const Profile& base);

} // namespace heapkit
