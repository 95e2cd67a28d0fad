// SPDX-License-Identifier: MIT
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/maps.hpp"
#include "heapkit/symbolize/index/index_files.hpp"
#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/text.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

using namespace heapkit;

namespace {

// Code of this process in three modules: libc (named from libc6-dbg's DWARF where it is
// installed), libheapkit and this test's own executable; a stretch of bytes from each
// function's start, so that lines and inline chains change along it. Without libheapkit
// where a test follows the index's making rather than its names: its DWARF, the biggest
// by far, takes 20 s to index in a plain build and over a minute under the sanitizers.
void anchor() {}
enum class Libheapkit { in, out };
std::vector<uint64_t> own_code_addresses(Libheapkit libheapkit = Libheapkit::in) {
    std::vector<uint64_t> starts = {
        reinterpret_cast<uint64_t>(&::qsort),
        reinterpret_cast<uint64_t>(&::strtol),
        reinterpret_cast<uint64_t>(&::getenv),
        reinterpret_cast<uint64_t>(&anchor),
    };
    if (libheapkit == Libheapkit::in) {
        starts.push_back(reinterpret_cast<uint64_t>(&heapkit::locate_file));
        starts.push_back(reinterpret_cast<uint64_t>(&heapkit::index_files));
    }
    std::vector<uint64_t> addresses;
    for (uint64_t start : starts) {
        for (uint64_t offset = 0; offset < 96; offset += 3) {
            addresses.push_back(start + offset);
        }
    }
    return addresses;
}

// A profile of this process's addresses, placed in its mappings as the runtime places its
// own (runtime/export/export.cpp).
Profile own_profile(const std::vector<uint64_t>& addresses) {
    RawDump dump;
    dump.source = "/proc/self/maps";
    dump.sample_period = 1;
    dump.has_maps = true;
    auto text = read_input("/proc/self/maps");
    REQUIRE(text);
    LineCursor lines(text->bytes);
    while (auto line = lines.next()) {
        if (auto entry = parse_maps_line(*line, "/proc/self/maps")) {
            dump.maps.push_back(std::move(*entry));
        }
    }
    for (uint64_t address : addresses) {
        dump.add_stack({&address, 1}, {1, 1, 0, 0});
    }
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(dump));
    return build_profile(dumps, {});
}

std::string frames_text(const Location& location) {
    std::string text;
    for (const Frame& frame : location.frames) {
        text += fmt::format("{} {} {}:{}:{} ({}); ", frame.name, frame.system_name, frame.file,
                            frame.line, frame.column, frame.start_line);
    }
    return text;
}

// Each location's frames as text, by address.
std::map<uint64_t, std::string> named(const Profile& profile) {
    std::map<uint64_t, std::string> names;
    for (const Location& location : profile.locations) {
        names[location.address] = frames_text(location);
    }
    return names;
}

// The files a symbolized profile's locations lie in, by path (each has a build id).
std::set<std::string> used_files(const Profile& profile) {
    std::set<std::string> paths;
    for (const Location& location : profile.locations) {
        if (location.module != no_module && !profile.modules[location.module].build_id.empty()) {
            paths.insert(profile.modules[location.module].path);
        }
    }
    return paths;
}

} // namespace

TEST_CASE("heapkit::index_files indexes each file once, under its build id") {
    TempDir cache;
    SymbolizeOptions options;
    options.cache_directory = cache.path.string();
    std::vector<std::string> warnings;
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    auto first = index_files({self, "/nonexistent/file", "/proc/self/status"}, options, warnings);
    REQUIRE(first.size() == 3);
    CHECK(warnings.empty());
    CHECK(first[0].problem.empty());
    CHECK(first[0].built);
    CHECK(first[0].bytes > 0);
    CHECK(std::filesystem::file_size(first[0].index) == first[0].bytes);
    CHECK(first[0].index.find("/index-2/" + first[0].key) != std::string::npos);
    CHECK_FALSE(first[0].key.ends_with("-symbols")); // built with -g
    CHECK(first[1].problem.find("/nonexistent/file") != std::string::npos);
    CHECK(first[1].index.empty());
    CHECK(first[2].problem.find("/proc/self/status") != std::string::npos);

    auto again = index_files({self}, options, warnings);
    REQUIRE(again.size() == 1);
    CHECK_FALSE(again[0].built); // kept from the first call
    CHECK(again[0].index == first[0].index);
}

TEST_CASE("heapkit::index_files takes a build given under two paths once") {
    // A second flock on a key this process holds would wait for itself, forever.
    TempDir cache;
    SymbolizeOptions options;
    options.cache_directory = cache.path.string();
    std::vector<std::string> warnings;
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::filesystem::path link = cache.path / "same-build";
    std::filesystem::create_symlink(self, link);
    auto both = index_files({self, link.string()}, options, warnings, BuildLock::Wait::yes);
    REQUIRE(both.size() == 2);
    CHECK(warnings.empty());
    CHECK(both[0].key == both[1].key);
    CHECK(both[0].index == both[1].index);
    CHECK(std::filesystem::file_size(both[0].index) == both[0].bytes);
}

TEST_CASE("symbolize with an index builder names as libdw does, and builds each file once") {
    std::vector<uint64_t> addresses = own_code_addresses();
    Profile by_files = own_profile(addresses);
    symbolize(by_files, SymbolizeOptions{});

    TempDir cache;
    std::vector<std::vector<std::string>> calls;
    SymbolizeOptions options;
    options.cache_directory = cache.path.string();
    options.index_builder = [&](const std::vector<std::string>& paths) {
        calls.push_back(paths);
        std::vector<std::string> problems;
        for (const IndexedFile& file : index_files(paths, options, problems)) {
            if (!file.problem.empty()) {
                problems.push_back(file.problem);
            }
        }
        return problems;
    };
    Profile by_index = own_profile(addresses);
    SymbolizeReport report = symbolize(by_index, options);
    CHECK(report.warnings.empty());
    // One call for all of them: libc (or, in a sanitizer build, its interceptors'
    // library), libheapkit and this program.
    REQUIRE(calls.size() == 1);
    CHECK(std::set<std::string>(calls[0].begin(), calls[0].end()) == used_files(by_files));
    CHECK(calls[0].size() == used_files(by_files).size());
    CHECK(calls[0].size() >= 3);
    auto expected = named(by_files);
    auto got = named(by_index);
    REQUIRE(got.size() == expected.size());
    size_t named_count = 0;
    for (const auto& [address, text] : expected) {
        CAPTURE(address);
        CHECK(got[address] == text);
        named_count += text.empty() ? 0 : 1;
    }
    // Most have names to compare (past a short function's end, some have none).
    CHECK(named_count > expected.size() * 3 / 4);
    for (const Module& module : by_index.modules) {
        if (!module.build_id.empty()) {
            auto other = std::find_if(by_files.modules.begin(), by_files.modules.end(),
                                      [&](const Module& m) { return m.path == module.path; });
            REQUIRE(other != by_files.modules.end());
            CHECK(module.has_line_numbers == other->has_line_numbers);
        }
    }

    // Indexed now: a second profile asks for nothing and names the same.
    Profile again = own_profile(addresses);
    symbolize(again, options);
    CHECK(calls.size() == 1);
    CHECK(named(again) == expected);
}

TEST_CASE("symbolize names from the files where the index builder makes nothing") {
    std::vector<uint64_t> addresses = own_code_addresses();
    Profile by_files = own_profile(addresses);
    symbolize(by_files, SymbolizeOptions{});

    TempDir cache;
    SymbolizeOptions options;
    options.cache_directory = cache.path.string();
    options.index_builder = [](const std::vector<std::string>& paths) {
        return std::vector<std::string>{fmt::format("indexer not run for {} files", paths.size())};
    };
    Profile fallback = own_profile(addresses);
    SymbolizeReport report = symbolize(fallback, options);
    CHECK(named(fallback) == named(by_files));
    std::string warning = fmt::format("indexer not run for {} files", used_files(by_files).size());
    CHECK(std::find(report.warnings.begin(), report.warnings.end(), warning) !=
          report.warnings.end());
    CHECK(std::filesystem::is_empty(cache.path)); // no frame cache either
}

TEST_CASE("without a builder: later hands the new builds over once named, now indexes them") {
    std::vector<uint64_t> addresses = own_code_addresses(Libheapkit::out);
    Profile by_files = own_profile(addresses);
    symbolize(by_files, SymbolizeOptions{});

    TempDir cache;
    std::vector<std::vector<std::string>> handed;
    SymbolizeOptions later;
    later.cache_directory = cache.path.string();
    later.new_indexes = NewIndexes::later;
    later.index_later = [&](const std::vector<std::string>& paths) {
        handed.push_back(paths);
        return std::vector<std::string>{};
    };
    Profile first = own_profile(addresses);
    symbolize(first, later);
    CHECK(named(first) == named(by_files));
    REQUIRE(handed.size() == 1);
    CHECK(std::set<std::string>(handed[0].begin(), handed[0].end()) == used_files(by_files));
    CHECK_FALSE(std::filesystem::exists(cache.path / "index-2")); // not made here

    // `now` makes them in the call, names the same, and later calls hand nothing over.
    SymbolizeOptions now = later;
    now.new_indexes = NewIndexes::now;
    Profile second = own_profile(addresses);
    symbolize(second, now);
    CHECK(named(second) == named(by_files));
    std::vector<std::string> warnings;
    std::vector<std::string> files(handed[0].begin(), handed[0].end());
    for (const IndexedFile& file : index_files(files, now, warnings)) {
        CHECK_FALSE(file.built); // all made by the call
    }
    Profile third = own_profile(addresses);
    symbolize(third, later);
    CHECK(named(third) == named(by_files));
    CHECK(handed.size() == 1);
}

TEST_CASE("one builder per key: a held lock is left, or waited for") {
    TempDir cache;
    std::string directory = (cache.path / "index-2").string();
    auto held = BuildLock::take(directory, "abc", BuildLock::Wait::no);
    REQUIRE(held);
    CHECK(BuildLock::busy(directory, "abc"));
    CHECK_FALSE(BuildLock::take(directory, "abc", BuildLock::Wait::no)); // flock: per open
    CHECK_FALSE(BuildLock::busy(directory, "other"));
    held.reset();
    CHECK_FALSE(BuildLock::busy(directory, "abc"));
    CHECK(BuildLock::take(directory, "abc", BuildLock::Wait::no));

    // What a file of another user's, or a link, under the lock's name gives: no lock file
    // is used, and the build goes on unlocked rather than follow it.
    std::filesystem::create_symlink("/etc/passwd",
                                    std::filesystem::path(directory) / ".locks" / "linked");
    auto unlocked = BuildLock::take(directory, "linked", BuildLock::Wait::no);
    CHECK(unlocked);
    CHECK_FALSE(BuildLock::busy(directory, "linked"));
}
