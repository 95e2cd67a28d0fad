// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/stacks/dump_labels.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/emit/stacks/standard_frames.hpp"
#include "heapkit/heapkit.hpp"
#include "test_profiles.hpp"

#include <algorithm>
#include <climits>
#include <map>

using namespace heapkit;

TEST_CASE("heapkit::write_folded prints root-first stacks without allocator frames") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    // The leaf in libjemalloc stays unnamed; malloc is named and cut with it.
    CHECK(write_folded(profile, {}) == "main;0x900000 4096\n"
                                       "main;hold 8192\n");
}

TEST_CASE("heapkit::write_folded keeps allocator frames on request, unnamed as module+offset") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    FoldedOptions options;
    options.frames.keep_allocator_frames = true;
    // 0x7f0000001010 is file offset 0x8000 + 0x1010 in libjemalloc.so.2.
    CHECK(write_folded(profile, options) == "main;0x900000 4096\n"
                                            "main;hold;malloc;libjemalloc.so.2+0x9010 8192\n");
}

TEST_CASE("heapkit::write_folded cuts unnamed frames of a jemalloc module at the leaf") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, {{0x555500001100 - 1, "hold"}, {0x555500001200 - 1, "main"}});
    profile.modules[1].is_allocator = true;
    // 0x555500001200 is left unnamed here: file offset 0x1000 + 0x200 in /srv/app.
    CHECK(write_folded(profile, {}) == "app+0x1200;0x900000 4096\n"
                                       "main;hold 8192\n");
}

TEST_CASE("heapkit::write_folded labels an unnamed frame's module as a name is labelled") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    for (Module& module : profile.modules) {
        if (module.path == "/lib/libjemalloc.so.2") {
            module.path = "/lib/lib;je\x01.so"; // ';' shown as ':', a control escaped
        }
    }
    FoldedOptions options;
    options.frames.keep_allocator_frames = true;
    CHECK(write_folded(profile, options) == "main;0x900000 4096\n"
                                            "main;hold;malloc;lib:je\\x01.so+0x9010 8192\n");
}

TEST_CASE("heapkit::write_folded sums a named frame's line with an unnamed one spelled alike") {
    Profile profile = test::make_profile(test::sample_dump);
    std::map<uint64_t, std::string> names = test::app_names;
    names[0x555500001100 - 1] = "0x900000"; // "hold" named as the other stack's address
    test::name_locations(profile, names);
    CHECK(write_folded(profile, {}) == "main;0x900000 12288\n");
}

// The churn stack has no malloc frame and its module is not known to be jemalloc: its
// unnamed leaf stays.
TEST_CASE("heapkit::write_folded sums identical stacks and picks the sample type") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    profile.samples.push_back(profile.samples[0]);
    FoldedOptions alloc;
    alloc.sample = SampleType::alloc_objects;
    CHECK(write_folded(profile, alloc) == "main;0x900000 1\n"
                                          "main;churn;libjemalloc.so.2+0x9010 10\n"
                                          "main;hold 4\n");
}

TEST_CASE("heapkit::write_folded prefixes thread frames") {
    Profile profile = test::make_profile(test::sample_dump, true);
    test::name_locations(profile, test::app_names);
    FoldedOptions options;
    options.thread_frames = true;
    options.sample = SampleType::alloc_space;
    CHECK(write_folded(profile, options) == "main;main;hold 8192\n"
                                            "t1;main;0x900000 4096\n"
                                            "t1;main;churn;libjemalloc.so.2+0x9010 1280\n");
}

TEST_CASE("heapkit::write_folded prefixes dump frames, before thread frames") {
    std::vector<RawDump> dumps;
    for (const char* source : {"/hosts/a/jeprof.1.0.f.heap", "/hosts/b/jeprof.2.0.f.heap"}) {
        auto dump = parse_dump(test::sample_dump, source);
        REQUIRE(dump);
        dumps.push_back(std::move(*dump));
    }
    Profile profile = build_profile(dumps, BuildOptions{true});
    test::name_locations(profile, test::app_names);
    FoldedOptions options;
    options.dump_frames = true;
    CHECK(write_folded(profile, options) == "jeprof.1.0.f.heap;main;0x900000 4096\n"
                                            "jeprof.1.0.f.heap;main;hold 8192\n"
                                            "jeprof.2.0.f.heap;main;0x900000 4096\n"
                                            "jeprof.2.0.f.heap;main;hold 8192\n");
    options.thread_frames = true;
    CHECK(write_folded(profile, options) == "jeprof.1.0.f.heap;main;main;hold 8192\n"
                                            "jeprof.1.0.f.heap;t1;main;0x900000 4096\n"
                                            "jeprof.2.0.f.heap;main;main;hold 8192\n"
                                            "jeprof.2.0.f.heap;t1;main;0x900000 4096\n");
}

namespace {

// write_folded as the plain rules say it, one std::string per stack: the reference for
// the token-based writer. Names only (FrameStyle::function), no address texts.
std::string folded_reference(const Profile& profile, const FoldedOptions& options) {
    AllocatorFrameMatcher matcher;
    auto label = [](std::string text) {
        std::replace(text.begin(), text.end(), ';', ':');
        return text;
    };
    std::map<std::string, int64_t> lines;
    for (const Sample& sample : profile.samples) {
        int64_t value = value_of(sample.values, options.sample);
        if (value == 0) {
            continue;
        }
        std::span<const uint32_t> locations = profile.locations_of(sample);
        size_t in_allocator = allocator_module_prefix(profile, locations);
        std::vector<std::string> frames; // leaf first
        std::vector<bool> allocator;
        std::vector<bool> standard;
        for (size_t l = 0; l < locations.size(); ++l) {
            const Location& location = profile.locations[locations[l]];
            for (size_t f = 0; f < location.frames.size(); ++f) {
                bool inlined = f + 1 < location.frames.size();
                frames.push_back(label(std::string(location.frames[f].name)) +
                                 (inlined && options.annotate_inline ? "_[i]" : ""));
                allocator.push_back(l < in_allocator || matcher.matches(location.frames[f].name));
                standard.push_back(is_standard_library_function(location.frames[f].name));
            }
        }
        size_t first_kept = 0;
        for (size_t f = frames.size(); f-- > 0 && !options.frames.keep_allocator_frames;) {
            if (allocator[f]) {
                first_kept = f + 1;
                break;
            }
        }
        // Then the standard library's frames, unless nothing else is left.
        size_t after_standard = first_kept;
        while (!options.frames.keep_allocator_frames && after_standard < frames.size() &&
               standard[after_standard]) {
            ++after_standard;
        }
        first_kept = after_standard < frames.size() ? after_standard : first_kept;
        std::string line;
        if (options.thread_frames && sample.thread >= 0) {
            line = label(profile.thread_labels[static_cast<size_t>(sample.thread)]);
        }
        for (size_t f = frames.size(); f-- > first_kept;) {
            line += line.empty() ? "" : ";";
            line += frames[f];
        }
        if (!line.empty()) {
            int64_t& total = lines[line];
            total = std::min<int64_t>(total, INT64_MAX - value) + value;
        }
    }
    std::string out;
    for (const auto& [line, value] : lines) {
        out += line + " " + std::to_string(value) + "\n";
    }
    return out;
}

} // namespace

// write_folded's lines rebuilt from spell_sample_stacks: each sample's value added to the
// line it names.
std::string folded_from_samples(const Profile& profile, const FoldedOptions& options) {
    auto spelled = spell_sample_stacks(profile, options);
    REQUIRE(spelled);
    std::map<std::string, int64_t> lines;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        if (uint32_t stack = spelled->stack_of_sample[s]; stack != SampleStacks::none) {
            int64_t& sum = lines[spelled->stacks.at(stack)];
            int64_t value = value_of(profile.samples[s].values, options.sample);
            sum = __builtin_add_overflow(sum, value, &sum) ? INT64_MAX : sum;
        }
    }
    std::string out;
    for (const auto& [stack, value] : lines) {
        if (value != 0) {
            out += stack + " " + std::to_string(value) + "\n";
        }
    }
    return out;
}

TEST_CASE("heapkit::write_folded agrees with one string per stack on random profiles") {
    // Names that are prefixes of each other, hold ';' and ' ', sort around ';', are empty,
    // are allocator functions or the standard library's; inline chains; shared and
    // repeated stacks; threads.
    const std::vector<std::string> names = {"a",
                                            "ab",
                                            "a;b",
                                            "a b",
                                            "a:",
                                            "a.b",
                                            "",
                                            "b",
                                            "main",
                                            "malloc",
                                            "operator new",
                                            "zz",
                                            "std::v<char>::grow(int)",
                                            "alloc::vec::from_elem"};
    uint64_t state = 7;
    auto next = [&](uint64_t bound) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return (state >> 33) % bound;
    };
    for (int round = 0; round < 300; ++round) {
        Profile profile;
        Module jemalloc;
        jemalloc.path = "/lib/libjemalloc.so.2";
        jemalloc.is_allocator = true;
        profile.modules.push_back(jemalloc);
        profile.thread_labels = {"main", "t;1", "a"};
        for (uint32_t l = 0; l < 12; ++l) {
            Location location{0x1000 + l, {}, next(3) == 0 ? 0u : no_module};
            for (uint64_t f = 1 + next(3); f-- > 0;) {
                std::string_view name = profile.strings->intern(names[next(names.size())]);
                location.frames.push_back(Frame{name, name, {}, 0, 0, 0});
            }
            profile.locations.push_back(location);
        }
        for (uint64_t s = next(40); s-- > 0;) {
            std::vector<uint32_t> stack;
            for (uint64_t depth = 1 + next(5); depth-- > 0;) {
                stack.push_back(static_cast<uint32_t>(next(profile.locations.size())));
            }
            int64_t bytes = next(4) == 0 ? INT64_MAX / 3 : static_cast<int64_t>(next(1000));
            profile.add_sample(stack, HeapValues{0, 0, 1, bytes},
                               static_cast<int32_t>(next(4)) - 1);
        }
        FoldedOptions options;
        options.frames.keep_allocator_frames = next(2) == 0;
        options.thread_frames = next(2) == 0;
        options.annotate_inline = next(2) == 0;
        CAPTURE(round);
        CHECK(write_folded(profile, options) == folded_reference(profile, options));
        CHECK(write_folded(profile, options) == folded_from_samples(profile, options));
    }
}

TEST_CASE("heapkit::spell_sample_stacks names each sample's line") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    profile.samples.push_back(profile.samples[0]); // another sample of the first stack
    auto spelled = spell_sample_stacks(profile, {});
    REQUIRE(spelled);
    REQUIRE(spelled->stack_of_sample.size() == 4);
    auto stack_of = [&](size_t s) { return spelled->stacks.at(spelled->stack_of_sample[s]); };
    CHECK(stack_of(0) == "main;hold");
    CHECK(spelled->stack_of_sample[1] == SampleStacks::none); // nothing in use: no line
    CHECK(stack_of(2) == "main;0x900000");
    CHECK(spelled->stack_of_sample[3] == spelled->stack_of_sample[0]);
    CHECK(spelled->stacks.size() == 2);
}
