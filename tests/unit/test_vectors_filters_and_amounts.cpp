// SPDX-License-Identifier: MIT
// tests/vectors/filters_and_amounts.json through the CLI's own code: the patterns through
// filter_stacks (focus, ignore, hide) and --drop-frames' matcher, the amounts through quantity(),
// percent_of() and with_thousands(). The pages' JavaScript is run through the same file by
// tests/e2e/test_js_vectors.py, so that the two cannot drift apart.
#include "heapkit/emit/flame/labels.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "test_profiles.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

using namespace heapkit;
using nlohmann::json;

namespace {

const json& vectors() {
    static const json loaded = [] {
        const char* path = std::getenv("HEAPKIT_VECTORS");
        REQUIRE_MESSAGE(path, "HEAPKIT_VECTORS names tests/vectors/filters_and_amounts.json");
        std::ifstream in(path);
        REQUIRE_MESSAGE(in, path);
        return json::parse(in);
    }();
    return loaded;
}

// One stack per name, the name its only frame.
Profile one_frame_stacks() {
    std::vector<test::NamedStack> stacks;
    for (const json& name : vectors()["names"]) {
        stacks.push_back({{name.get<std::string>()}, 1024});
    }
    return test::named_profile(stacks);
}

// The names of the frames left in the stacks that `filter` keeps.
std::set<std::string> names_left(const StackFilter& filter) {
    Profile profile = one_frame_stacks();
    auto filtered = filter_stacks(profile, filter);
    REQUIRE_MESSAGE(filtered, std::string(filter.focus + filter.ignore + filter.hide));
    std::set<std::string> left;
    for (const Sample& sample : profile.samples) {
        for (uint32_t location : profile.locations_of(sample)) {
            for (const Frame& frame : profile.locations[location].frames) {
                left.insert(std::string(frame.name));
            }
        }
    }
    return left;
}

std::set<std::string> all_names() {
    std::set<std::string> names;
    for (const json& name : vectors()["names"]) {
        names.insert(name.get<std::string>());
    }
    return names;
}

std::set<std::string> set_of(const json& list) {
    std::set<std::string> names;
    for (const json& name : list) {
        names.insert(name.get<std::string>());
    }
    return names;
}

std::set<std::string> without(std::set<std::string> names, const std::set<std::string>& gone) {
    for (const std::string& name : gone) {
        names.erase(name);
    }
    return names;
}

// The names one to a line, for a failure's message.
std::string listed(const std::set<std::string>& names) {
    std::string out;
    for (const std::string& name : names) {
        out += "\n  " + name;
    }
    return out;
}

// focus keeps the matching names' stacks; ignore and hide leave out the others'.
void check_matches(const std::string& pattern, const std::set<std::string>& matches) {
    CAPTURE(pattern);
    CHECK(listed(names_left({pattern, "", ""})) == listed(matches));
    CHECK(listed(names_left({"", pattern, ""})) == listed(without(all_names(), matches)));
    CHECK(listed(names_left({"", "", pattern})) == listed(without(all_names(), matches)));
}

} // namespace

TEST_CASE("filter_stacks: the shared vectors' patterns match the names they list") {
    CHECK(one_frame_stacks().samples.size() == vectors()["names"].size());
    for (const json& vector : vectors()["search"]) {
        check_matches(vector["pattern"].get<std::string>(), set_of(vector["matches"]));
    }
    for (const json& vector : vectors()["differ"]) {
        std::string pattern = vector["pattern"].get<std::string>();
        CAPTURE(pattern);
        Profile profile = one_frame_stacks();
        if (vector["re2"].is_null()) {
            CHECK_FALSE(filter_stacks(profile, {pattern, "", ""}));
        } else {
            check_matches(pattern, set_of(vector["re2"]));
        }
    }
}

TEST_CASE("filter_stacks: the shared vectors' invalid patterns are refused") {
    for (const json& pattern : vectors()["invalid"]) {
        CAPTURE(pattern);
        Profile profile = one_frame_stacks();
        CHECK_FALSE(filter_stacks(profile, {pattern.get<std::string>(), "", ""}));
    }
}

// The names --drop-frames takes with `pattern`.
std::set<std::string> dropped(const std::string& pattern) {
    auto matcher = AllocatorFrameMatcher::make(pattern);
    REQUIRE_MESSAGE(matcher, pattern);
    std::set<std::string> names;
    for (const std::string& name : all_names()) {
        if (matcher->matches(name)) {
            names.insert(name);
        }
    }
    return names;
}

TEST_CASE("AllocatorFrameMatcher: the shared vectors' drop patterns take the names they list") {
    for (const json& vector : vectors()["drop"]) {
        std::string pattern = vector["pattern"].get<std::string>();
        CAPTURE(pattern);
        CHECK(listed(dropped(pattern)) == listed(set_of(vector["matches"])));
    }
}

TEST_CASE("quantity, percent_of, with_thousands: the shared vectors' amounts") {
    for (const json& vector : vectors()["amounts"]) {
        CAPTURE(vector.dump());
        CHECK(quantity(vector["value"].get<int64_t>(), vector["bytes"].get<bool>()) ==
              vector["text"].get<std::string>());
    }
    for (const json& vector : vectors()["percents"]) {
        CAPTURE(vector.dump());
        CHECK(percent_of(vector["part"].get<uint64_t>(), vector["total"].get<uint64_t>()) ==
              vector["text"].get<std::string>());
    }
    for (const json& vector : vectors()["thousands"]) {
        CAPTURE(vector.dump());
        CHECK(with_thousands(vector["value"].get<uint64_t>()) == vector["text"].get<std::string>());
    }
}

TEST_CASE("fitted_label: the shared vectors' labels") {
    for (const json& vector : vectors()["labels"]) {
        CAPTURE(vector.dump());
        CHECK(fitted_label(vector["name"].get<std::string>(), vector["room"].get<double>()) ==
              vector["label"].get<std::string>());
    }
}
