// SPDX-License-Identifier: MIT
#include "heapkit/runtime/cpu/cpu_export.hpp"

#include "heapkit/runtime/export/export.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <fmt/format.h>
#include <map>
#include <span>

namespace heapkit::runtime {
namespace {

// Identical stacks counted once: a busy loop repeats a few stacks thousands of times.
std::map<std::vector<uint64_t>, uint64_t> stack_counts(const CpuSamples& samples) {
    std::map<std::vector<uint64_t>, uint64_t> counts;
    size_t at = 0;
    for (size_t i = 0; i < samples.depths.size(); ++i) {
        auto first = samples.pcs.begin() + static_cast<std::ptrdiff_t>(at);
        counts[std::vector<uint64_t>(first, first + samples.depths[i])] +=
            i < samples.ticks.size() ? samples.ticks[i] : 1;
        at += samples.depths[i];
    }
    return counts;
}

void append_word(std::string& out, uint64_t word) {
    out.append(reinterpret_cast<const char*>(&word), sizeof word); // native order, as jeprof
}

} // namespace

Profile cpu_profile(const CpuSamples& samples, bool names) {
    RawDump dump;
    dump.source = "SIGPROF samples";
    // Period 1 with a "size" of period_nanos (a million or more) per tick: unsampling
    // then leaves the counts as they are (1 - e^-1000000 is 1).
    dump.sample_period = 1;
    auto period = static_cast<uint64_t>(samples.period_nanos());
    for (const auto& [stack, count] : stack_counts(samples)) {
        SampledCounts counts;
        counts.cur_objects = count;
        counts.cur_bytes = count * period;
        dump.total.cur_objects += counts.cur_objects;
        dump.total.cur_bytes += counts.cur_bytes;
        dump.add_stack(stack, counts);
    }
    Profile profile = own_profile(std::move(dump), names);
    profile.time_nanos = samples.start_nanos;
    profile.duration_nanos = samples.duration_nanos;
    return profile;
}

Result<std::string> cpu_pprof(const CpuSamples& samples, bool names) {
    Profile profile = cpu_profile(samples, names);
    // cpu_profile keeps each stack's ticks as its objects and CPU time as its bytes.
    CpuSampleTypes cpu{samples.period_nanos(), {}, {}};
    for (const Sample& sample : profile.samples) {
        cpu.ticks.push_back(sample.values.inuse_objects);
        cpu.nanos.push_back(sample.values.inuse_space);
    }
    PprofOptions options;
    options.cpu = std::move(cpu);
    if (samples.dropped > 0) {
        options.comments.push_back(
            fmt::format("{} samples dropped: the sample buffer was full", samples.dropped));
    }
    return write_pprof(profile, options);
}

std::string cpu_gperftools(const CpuSamples& samples) {
    std::string out;
    for (uint64_t word : {0, 3, 0}) {
        append_word(out, word);
    }
    append_word(out, static_cast<uint64_t>(samples.period_nanos() / 1000));
    append_word(out, 0);
    for (const auto& [stack, count] : stack_counts(samples)) {
        append_word(out, count);
        append_word(out, stack.size());
        for (uint64_t pc : stack) {
            append_word(out, pc);
        }
    }
    for (uint64_t word : {0, 1, 0}) {
        append_word(out, word);
    }
    if (auto maps = read_input("/proc/self/maps")) {
        out += maps->bytes;
    }
    return out;
}

Result<std::string> cpu_flame_graph(const CpuSamples& samples, unsigned width) {
    FoldedOptions folded;
    folded.sample = SampleType::inuse_objects; // ticks
    folded.frames.keep_allocator_frames = true;
    FlameOptions flame;
    flame.title = "CPU Flame Graph";
    flame.width = width;
    flame.countname = "samples";
    flame.colors = Palette::hot;
    std::string svg;
    HEAPKIT_TRY(write_flame_graph(cpu_profile(samples, true), folded, flame,
                                  [&](std::string_view piece) -> Result<void> {
                                      svg += piece;
                                      return {};
                                  }));
    return svg;
}

} // namespace heapkit::runtime
