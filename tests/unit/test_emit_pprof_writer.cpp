// SPDX-License-Identifier: MIT
#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/gzip.hpp"
#include "profile.pb.h"
#include "test_profiles.hpp"

#include <set>

using namespace heapkit;
namespace pb = perftools::profiles;

namespace {

pb::Profile decode(const std::string& bytes) {
    pb::Profile out;
    REQUIRE(out.ParseFromString(bytes));
    return out;
}

std::string text_of(const pb::Profile& profile, int64_t index) {
    REQUIRE(index >= 0);
    REQUIRE(index < profile.string_table_size());
    return profile.string_table(static_cast<int>(index));
}

// The rules of formats.md §6 that pprof's CheckValid and its readers rely on.
void check_valid(const pb::Profile& p) {
    REQUIRE(p.string_table_size() > 0);
    CHECK(p.string_table(0).empty());
    std::set<uint64_t> mappings, functions, locations;
    for (const auto& m : p.mapping()) {
        CHECK(m.id() == mappings.size() + 1); // sequential from 1
        mappings.insert(m.id());
        CHECK(m.memory_start() < m.memory_limit());
    }
    for (const auto& f : p.function()) {
        CHECK(f.id() == functions.size() + 1);
        functions.insert(f.id());
        text_of(p, f.name());
    }
    for (const auto& l : p.location()) {
        CHECK(l.id() == locations.size() + 1);
        locations.insert(l.id());
        if (l.mapping_id() != 0) {
            REQUIRE(mappings.count(l.mapping_id()) == 1);
            const auto& m = p.mapping(static_cast<int>(l.mapping_id() - 1));
            CHECK(l.address() >= m.memory_start());
            CHECK(l.address() < m.memory_limit());
        }
        for (const auto& line : l.line()) {
            CHECK(functions.count(line.function_id()) == 1);
        }
    }
    for (const auto& s : p.sample()) {
        CHECK(s.value_size() == p.sample_type_size());
        for (uint64_t id : s.location_id()) {
            CHECK(locations.count(id) == 1);
        }
    }
}

} // namespace

TEST_CASE("heapkit::encode_pprof writes Go heap profile conventions") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    profile.modules[0].build_id = "0123abcd";
    profile.modules[0].has_functions = true;
    pb::Profile p = decode(encode_pprof(profile, {}));
    check_valid(p);
    REQUIRE(p.sample_type_size() == 4);
    const char* expected[][2] = {{"alloc_objects", "count"},
                                 {"alloc_space", "bytes"},
                                 {"inuse_objects", "count"},
                                 {"inuse_space", "bytes"}};
    for (int i = 0; i < 4; ++i) {
        CHECK(text_of(p, p.sample_type(i).type()) == expected[i][0]);
        CHECK(text_of(p, p.sample_type(i).unit()) == expected[i][1]);
    }
    CHECK(text_of(p, p.period_type().type()) == "space");
    CHECK(text_of(p, p.period_type().unit()) == "bytes");
    CHECK(p.period() == 1);
    CHECK(text_of(p, p.default_sample_type()) == "inuse_space");
    CHECK(text_of(p, p.drop_frames()) == allocator_frames_regex());
    REQUIRE(p.comment_size() >= 1);
    CHECK(text_of(p, p.comment(0)) == "source: test.heap");
    CHECK(p.time_nanos() > 0);

    REQUIRE(p.mapping_size() == 2);
    const auto& main = p.mapping(0);
    CHECK(text_of(p, main.filename()) == "/srv/app");
    CHECK(text_of(p, main.build_id()) == "0123abcd");
    CHECK(main.memory_start() == 0x555500001000);
    CHECK(main.memory_limit() == 0x555500002000);
    CHECK(main.file_offset() == 0x1000);
    CHECK(main.has_functions());
    CHECK_FALSE(main.has_filenames());
    CHECK_FALSE(p.mapping(1).has_functions());

    // First sample: leaf first, values in sample_type order, allocator frames kept
    // (pprof cuts them through drop_frames).
    const auto& hold = p.sample(0);
    CHECK(hold.location_id_size() == 4);
    CHECK(std::vector<int64_t>(hold.value().begin(), hold.value().end()) ==
          std::vector<int64_t>{2, 8192, 2, 8192});
    const auto& leaf = p.location(static_cast<int>(hold.location_id(0) - 1));
    CHECK(leaf.address() == 0x7f0000001010);
    CHECK(leaf.mapping_id() == 2);
    CHECK(leaf.line_size() == 0);
    const auto& hold_location = p.location(static_cast<int>(hold.location_id(2) - 1));
    REQUIRE(hold_location.line_size() == 1);
    const auto& hold_function =
        p.function(static_cast<int>(hold_location.line(0).function_id() - 1));
    CHECK(text_of(p, hold_function.name()) == "hold");
    CHECK(text_of(p, hold_function.system_name()) == "hold");
    // The address outside every mapping has no mapping.
    CHECK(p.location(static_cast<int>(p.sample(2).location_id(0) - 1)).mapping_id() == 0);
}

TEST_CASE("heapkit::encode_pprof writes two sample types without accum, and thread labels") {
    std::string text = test::sample_dump;
    for (size_t at = text.find(" ["); at != std::string::npos; at = text.find(" [", at + 1)) {
        text.replace(at, text.find(']', at) - at + 1, " [0: 0]");
    }
    Profile profile = test::make_profile(text.c_str(), true);
    PprofOptions options;
    options.default_type = SampleType::inuse_objects;
    options.frames.keep_allocator_frames = true;
    pb::Profile p = decode(encode_pprof(profile, options));
    check_valid(p);
    REQUIRE(p.sample_type_size() == 2);
    CHECK(text_of(p, p.sample_type(0).type()) == "inuse_objects");
    CHECK(text_of(p, p.default_sample_type()) == "inuse_objects");
    CHECK(p.drop_frames() == 0);
    REQUIRE(p.sample_size() == 2); // the churn stack is all zero without accum
    REQUIRE(p.sample(0).label_size() == 1);
    CHECK(text_of(p, p.sample(0).label(0).key()) == "thread");
    CHECK(text_of(p, p.sample(0).label(0).str()) == "main");
    CHECK(text_of(p, p.sample(1).label(0).str()) == "t1");
}

TEST_CASE("heapkit::encode_pprof cuts unnamed leaf frames in a jemalloc module") {
    Profile profile = test::make_profile(test::sample_dump);
    profile.modules[1].is_allocator = true;
    pb::Profile p = decode(encode_pprof(profile, {}));
    CHECK(p.sample(0).location_id_size() == 2); // hold, main
    PprofOptions keep;
    keep.frames.keep_allocator_frames = true;
    CHECK(decode(encode_pprof(profile, keep)).sample(0).location_id_size() == 4);
}

TEST_CASE("heapkit::encode_pprof writes only UTF-8 strings") {
    Profile profile = test::make_profile(test::sample_dump, true);
    profile.thread_labels[0] = "caf\xE9"; // a Latin-1 thread name
    pb::Profile p = decode(encode_pprof(profile, {}));
    CHECK(text_of(p, p.sample(0).label(0).str()) == "caf\xEF\xBF\xBD");
}

TEST_CASE("heapkit::write_pprof gzips the message") {
    Profile profile = test::make_profile(test::sample_dump);
    std::string packed = write_pprof(profile, {}).value();
    REQUIRE(is_gzip(packed));
    auto raw = gunzip(packed, "p.pb.gz");
    REQUIRE(raw);
    check_valid(decode(*raw));
}

TEST_CASE("heapkit::encode_pprof shows a GCC clone as its function, keeping its symbol") {
    Profile profile = test::make_profile(test::sample_dump);
    std::map<uint64_t, std::string> names = test::app_names;
    names[0x555500001100 - 1] = "hold.constprop.0";
    test::name_locations(profile, names);
    auto function_names = [&](const PprofOptions& options) {
        pb::Profile p = decode(encode_pprof(profile, options));
        std::set<std::pair<std::string, std::string>> found; // name, system_name
        for (const auto& f : p.function()) {
            found.emplace(text_of(p, f.name()), text_of(p, f.system_name()));
        }
        return found;
    };
    CHECK(function_names({}).count({"hold", "hold.constprop.0"}) == 1);
    PprofOptions apart;
    apart.frames.merge_clones = false;
    CHECK(function_names(apart).count({"hold.constprop.0", "hold.constprop.0"}) == 1);
}

TEST_CASE("heapkit::encode_pprof joins the user's drop_frames to the allocator's") {
    Profile profile = test::make_profile(test::sample_dump);
    PprofOptions options;
    options.frames.drop_frames = "zmalloc|zrealloc";
    pb::Profile p = decode(encode_pprof(profile, options));
    CHECK(text_of(p, p.drop_frames()) == allocator_frames_regex() + "|zmalloc|zrealloc");
    options.frames.keep_allocator_frames = true;
    p = decode(encode_pprof(profile, options));
    CHECK(text_of(p, p.drop_frames()) == "zmalloc|zrealloc");
}

TEST_CASE("heapkit::encode_pprof adds sample types of the caller's values") {
    Profile profile = test::make_profile(test::sample_dump);
    ExtraSampleType extra[] = {{"growth", "bytes_per_second", {7, -3, 0}},
                               {"slope", "bytes_per_second", {70, -30, 1}}};
    pb::Profile p = decode(encode_pprof(profile, {}, extra));
    check_valid(p);
    REQUIRE(p.sample_type_size() == 6);
    CHECK(text_of(p, p.sample_type(4).type()) == "growth");
    CHECK(text_of(p, p.sample_type(4).unit()) == "bytes_per_second");
    CHECK(text_of(p, p.sample_type(5).type()) == "slope");
    CHECK(text_of(p, p.default_sample_type()) == "inuse_space");
    REQUIRE(p.sample_size() == 3);
    for (int s = 0; s < 3; ++s) {
        CHECK(p.sample(s).value(4) == extra[0].values[static_cast<size_t>(s)]);
        CHECK(p.sample(s).value(5) == extra[1].values[static_cast<size_t>(s)]);
        CHECK(p.sample(s).value(3) == profile.samples[static_cast<size_t>(s)].values.inuse_space);
    }
}

TEST_CASE("heapkit::encode_pprof writes Go's CPU profile types when given them") {
    Profile profile = test::make_profile(test::sample_dump);
    PprofOptions options;
    options.cpu = CpuSampleTypes{10'000'000, {3, 5, 7}, {30'000'000, 50'000'000, 70'000'000}};
    pb::Profile p = decode(encode_pprof(profile, options));
    check_valid(p);
    REQUIRE(p.sample_type_size() == 2);
    CHECK(text_of(p, p.sample_type(0).type()) == "samples");
    CHECK(text_of(p, p.sample_type(0).unit()) == "count");
    CHECK(text_of(p, p.sample_type(1).type()) == "cpu");
    CHECK(text_of(p, p.sample_type(1).unit()) == "nanoseconds");
    CHECK(text_of(p, p.period_type().type()) == "cpu");
    CHECK(text_of(p, p.period_type().unit()) == "nanoseconds");
    CHECK(p.period() == 10'000'000);
    CHECK(text_of(p, p.default_sample_type()) == "cpu");
    CHECK(text_of(p, p.drop_frames()).empty()); // CPU time in malloc is not cut
    REQUIRE(p.sample_size() == 3);
    for (int s = 0; s < 3; ++s) {
        const Sample& sample = profile.samples[static_cast<size_t>(s)];
        CHECK(p.sample(s).value(0) == options.cpu->ticks[static_cast<size_t>(s)]);
        CHECK(p.sample(s).value(1) == options.cpu->nanos[static_cast<size_t>(s)]);
        CHECK(static_cast<size_t>(p.sample(s).location_id_size()) == sample.location_count);
    }
}

TEST_CASE("heapkit::write_pprof refuses CPU sample types that do not cover every sample") {
    Profile profile = test::make_profile(test::sample_dump);
    PprofOptions options;
    options.cpu = CpuSampleTypes{10'000'000, {3, 5}, {30, 50}};
    auto written = write_pprof(profile, options);
    REQUIRE_FALSE(written);
    CHECK(written.error().message.find("every sample") != std::string::npos);
}

TEST_CASE("heapkit::encode_pprof writes the profile's notes as comments") {
    Profile profile = test::make_profile(test::sample_dump);
    profile.notes = {"varnishd: no symbols beyond .dynsym (stripped); apt install varnish-dbgsym, "
                     "or set DEBUGINFOD_URLS"};
    pb::Profile p = decode(encode_pprof(profile, {}));
    REQUIRE(p.comment_size() == 2);
    CHECK(text_of(p, p.comment(0)) == "source: test.heap");
    CHECK(text_of(p, p.comment(1)) == profile.notes[0]);
}
