// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/frame_cache.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <string>

using namespace heapkit;
namespace fs = std::filesystem;

namespace {

// Where every frame text of these tests lives.
StringPool strings;

// `leaf` and `outer`: literals (a Frame views its texts).
std::vector<Frame> chain(std::string_view leaf, std::string_view outer) {
    return {Frame{leaf, "", "inline.h", 12, 5, 10},
            Frame{outer, "_Z5outerv", "main.cpp", 40, 0, 30}};
}

const std::string build_id = "0123456789abcdef0123456789abcdef01234567";

} // namespace

TEST_CASE("frame cache files round-trip and refuse damage") {
    FrameEntries entries;
    CHECK(entries.add(0x1000, chain("leaf()", "outer()")));
    CHECK(entries.add(0x2000, {}));
    CHECK(entries.add(0x3000, chain("", "")));
    CHECK_FALSE(entries.add(0x1000, chain("other()", "outer()"))); // the first answer stays
    std::string bytes = encode_frame_entries(entries);
    auto decoded = decode_frame_entries(bytes, strings);
    REQUIRE(decoded);
    REQUIRE(decoded->size() == 3);
    REQUIRE(decoded->find(0x2000));
    CHECK(decoded->find(0x2000)->empty()); // known to be unnamed, unlike a missing entry
    CHECK_FALSE(decoded->find(0x4000));
    std::span<const Frame> leaf_chain = *decoded->find(0x1000);
    REQUIRE(leaf_chain.size() == 2);
    CHECK(leaf_chain[0].name == "leaf()");
    const Frame& outer = leaf_chain[1];
    CHECK(outer.name == "outer()");
    CHECK(outer.system_name == "_Z5outerv");
    CHECK(outer.file == "main.cpp");
    CHECK(outer.line == 40);
    CHECK(leaf_chain[0].column == 5);
    CHECK(leaf_chain[0].start_line == 10);

    for (size_t length = 0; length < bytes.size(); ++length) {
        CHECK_FALSE(decode_frame_entries(std::string_view(bytes).substr(0, length), strings));
    }
    CHECK_FALSE(decode_frame_entries(bytes + "x", strings));
    std::string other_version = bytes;
    other_version[20] = '1'; // "heapkit frame cache 4" -> "... 1"
    CHECK_FALSE(decode_frame_entries(other_version, strings));
    std::string huge_count = bytes;
    huge_count.replace(26, 8, std::string(8, '\xff'));
    CHECK_FALSE(decode_frame_entries(huge_count, strings));
    // A frame's text index past the table: the frame is (name, system, file) indexes,
    // then line 12, column 5, start line 10.
    const uint32_t lines[] = {12, 5, 10};
    size_t at = bytes.find(std::string_view(reinterpret_cast<const char*>(lines), sizeof lines));
    REQUIRE(at != std::string::npos);
    std::string bad_index = bytes;
    bad_index.replace(at - 12, 4, std::string(4, '\xff'));
    CHECK_FALSE(decode_frame_entries(bad_index, strings));
}

TEST_CASE("a saved cache answers the next run; a disabled one holds nothing") {
    TempDir dir;
    {
        FrameCache cache(dir.path.string(), strings);
        CHECK_FALSE(cache.has(build_id));
        CHECK_FALSE(cache.find(build_id, 0x1000));
        cache.add(build_id, 0x1000, chain("a()", "b()"));
        cache.add("", 0x1000, chain("x()", "y()")); // no build id: never cached
        CHECK(cache.save().empty());
    }
    FrameCache next(dir.path.string(), strings);
    CHECK(next.has(build_id));
    auto hit = next.find(build_id, 0x1000);
    REQUIRE(hit);
    CHECK((*hit)[0].name == "a()");
    CHECK_FALSE(next.find(build_id, 0x1001));
    CHECK(std::distance(fs::directory_iterator(dir.path.string() + "/frames-4"),
                        fs::directory_iterator()) == 1);

    FrameCache disabled("", strings);
    disabled.add(build_id, 0x1000, chain("a()", "b()"));
    CHECK_FALSE(disabled.find(build_id, 0x1000));
    CHECK(disabled.save().empty());
}

TEST_CASE("saves by concurrent runs merge, and damaged files are replaced") {
    TempDir dir;
    FrameCache first(dir.path.string(), strings);
    FrameCache second(dir.path.string(), strings);
    CHECK_FALSE(first.has(build_id));
    CHECK_FALSE(second.has(build_id));
    first.add(build_id, 0x1000, chain("first()", "main()"));
    second.add(build_id, 0x2000, chain("second()", "main()"));
    CHECK(first.save().empty());
    CHECK(second.save().empty());
    FrameCache after(dir.path.string(), strings);
    CHECK(after.find(build_id, 0x1000));
    CHECK(after.find(build_id, 0x2000));

    std::ofstream(dir.path.string() + "/frames-4/" + build_id, std::ios::trunc) << "garbage";
    FrameCache damaged(dir.path.string(), strings);
    CHECK_FALSE(damaged.has(build_id));
    damaged.add(build_id, 0x3000, chain("third()", "main()"));
    CHECK(damaged.save().empty());
    FrameCache repaired(dir.path.string(), strings);
    CHECK(repaired.find(build_id, 0x3000));
}

TEST_CASE("the cache stays under its size bound, dropping the least recently used") {
    TempDir dir;
    std::string old_id = std::string(40, 'a');
    std::string new_id = std::string(40, 'b');
    // ~3 KB of file each (a file keeps each distinct text once).
    auto big = [](char c) {
        return std::vector<Frame>{Frame{strings.intern(std::string(3000, c)), "", "", 0, 0, 0}};
    };
    {
        FrameCache cache(dir.path.string(), strings, 8000);
        cache.add(old_id, 1, big('f'));
        CHECK(cache.save().empty());
    }
    fs::last_write_time(dir.path.string() + "/frames-4/" + old_id,
                        fs::file_time_type::clock::now() - std::chrono::hours(1));
    {
        FrameCache cache(dir.path.string(), strings, 8000);
        cache.add(new_id, 1, big('f'));
        CHECK(cache.save().empty());
    }
    CHECK(fs::exists(dir.path.string() + "/frames-4/" + new_id));
    CHECK(fs::exists(dir.path.string() + "/frames-4/" + old_id)); // 2 x ~3 KB fit in 8000 bytes
    {
        FrameCache cache(dir.path.string(), strings, 8000);
        cache.add(new_id, 2, big('g')); // the newest file grows to ~6 KB: the old one must go
        CHECK(cache.save().empty());
    }
    CHECK(fs::exists(dir.path.string() + "/frames-4/" + new_id));
    CHECK_FALSE(fs::exists(dir.path.string() + "/frames-4/" + old_id));
}

TEST_CASE("an unwritable cache directory is a warning, not a failure") {
    FrameCache cache("/proc/heapkit-cannot-be-here", strings);
    cache.add(build_id, 0x1000, chain("a()", "b()"));
    auto warnings = cache.save();
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("/proc/heapkit-cannot-be-here/frames-4") != std::string::npos);
}
