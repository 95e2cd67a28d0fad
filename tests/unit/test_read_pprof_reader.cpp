// SPDX-License-Identifier: MIT
#include "heapkit/model/pprof_profile.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "profile.pb.h"

#include <doctest/doctest.h>

using namespace heapkit;
namespace pb = perftools::profiles;

namespace {

// A CPU profile as Go writes one: two types, a mapping, a named location inlined into
// its caller, an unnamed one, one sample through both.
pb::Profile go_cpu() {
    pb::Profile p;
    for (const char* text : {"", "samples", "count", "cpu", "nanoseconds", "main.spin",
                             "main.inlined", "/app", "main.go"}) {
        p.add_string_table(text);
    }
    auto add_type = [&](int64_t type, int64_t unit) {
        pb::ValueType* value_type = p.add_sample_type();
        value_type->set_type(type);
        value_type->set_unit(unit);
    };
    add_type(1, 2);
    add_type(3, 4);
    p.set_default_sample_type(3);
    pb::Mapping* mapping = p.add_mapping();
    mapping->set_id(9);
    mapping->set_memory_start(0x400000);
    mapping->set_memory_limit(0x500000);
    mapping->set_filename(7);
    for (uint64_t id : {1, 2}) {
        pb::Function* function = p.add_function();
        function->set_id(id);
        function->set_name(id == 1 ? 5 : 6);
        function->set_filename(8);
    }
    pb::Location* named = p.add_location();
    named->set_id(3);
    named->set_mapping_id(9);
    named->set_address(0x401000);
    for (uint64_t function : {2, 1}) { // innermost first
        pb::Line* line = named->add_line();
        line->set_function_id(function);
        line->set_line(function == 2 ? 7 : 12);
    }
    pb::Location* unnamed = p.add_location();
    unnamed->set_id(4);
    unnamed->set_mapping_id(9);
    unnamed->set_address(0x402000);
    pb::Sample* sample = p.add_sample();
    sample->add_location_id(3);
    sample->add_location_id(4);
    sample->add_value(5);
    sample->add_value(50'000'000);
    return p;
}

Result<PprofFile> read(const pb::Profile& profile) {
    return read_pprof(profile.SerializeAsString(), "cpu.pb");
}

} // namespace

TEST_CASE("heapkit::looks_like_pprof") {
    CHECK(looks_like_pprof(go_cpu().SerializeAsString()));
    CHECK_FALSE(looks_like_pprof("heap_v2/524288\n  t*: 1: 2 [0: 0]\n"));
    CHECK_FALSE(looks_like_pprof(std::string("heap_v2/1\n@ 0x1\0", 16)));
    CHECK_FALSE(looks_like_pprof("{\"info\": {}}"));
    CHECK_FALSE(looks_like_pprof("--- symbol\n"));
    CHECK_FALSE(looks_like_pprof(""));
}

TEST_CASE("heapkit::read_pprof and profile_of_pprof: a CPU profile keeps its types") {
    auto file = read(go_cpu());
    REQUIRE(file);
    auto profile = profile_of_pprof(*file, "cpu.pb");
    REQUIRE(profile);
    CHECK(sample_type_named(*profile, "cpu") == profile->default_type);
    auto samples = sample_type_named(*profile, "samples");
    REQUIRE(samples);
    CHECK(sample_name(*profile, *samples) == "samples");
    CHECK(sample_unit(*profile, *profile->default_type) == "nanoseconds");
    CHECK_FALSE(sample_type_named(*profile, "inuse_space"));
    REQUIRE(profile->samples.size() == 1);
    CHECK(value_of(*profile, profile->samples[0], *samples) == 5);
    CHECK(value_of(*profile, profile->samples[0], *profile->default_type) == 50'000'000);
    REQUIRE(profile->locations.size() == 2);
    const Location& named = profile->locations[0];
    REQUIRE(named.frames.size() == 2);
    CHECK(named.frames[0].name == "main.inlined");
    CHECK(named.frames[0].line == 7);
    CHECK(named.frames[1].name == "main.spin");
    CHECK(profile->locations[1].frames.empty());
    CHECK(profile->locations[1].module == 0);
    CHECK(profile->modules[0].path == "/app");
    CHECK(profile->modules[0].is_main);
}

TEST_CASE("heapkit::read_pprof: every index checked") {
    auto message = [](const pb::Profile& profile) {
        auto file = read(profile);
        REQUIRE_FALSE(file);
        return file.error().message;
    };
    pb::Profile bad = go_cpu();
    bad.mutable_sample_type(0)->set_type(99);
    CHECK(message(bad) == "cpu.pb: sample type: string index 99 is outside the string table "
                          "(9 strings)");
    bad = go_cpu();
    bad.mutable_function(1)->set_name(-1);
    CHECK(message(bad).find("string index -1") != std::string::npos);
    bad = go_cpu();
    bad.mutable_location(0)->mutable_line(0)->set_function_id(7);
    CHECK(message(bad) == "cpu.pb: no function has id 7");
    bad = go_cpu();
    bad.mutable_location(1)->set_mapping_id(8);
    CHECK(message(bad) == "cpu.pb: no mapping has id 8");
    bad = go_cpu();
    bad.mutable_location(1)->set_id(3);
    CHECK(message(bad) == "cpu.pb: location id 3 is given twice");
    bad = go_cpu();
    bad.mutable_sample(0)->add_value(1);
    CHECK(message(bad) == "cpu.pb: sample 1 has 3 values for 2 sample types");
    bad = go_cpu();
    bad.set_string_table(0, "x");
    CHECK(message(bad) == "cpu.pb: not a pprof profile: its string table does not start with \"\"");
    std::string cut = go_cpu().SerializeAsString();
    auto file = read_pprof(std::string_view(cut).substr(0, cut.size() - 3), "cut.pb");
    REQUIRE_FALSE(file);
    CHECK(file.error().message.starts_with(
        "cut.pb: not a pprof profile: its protobuf encoding is damaged or cut short at byte "));
}
