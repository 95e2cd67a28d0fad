// SPDX-License-Identifier: MIT
#include "heapkit/util/output.hpp"
#include "temp_dir.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace heapkit;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST_CASE("heapkit::write_output replaces the target whole and leaves no temporary") {
    TempDir dir;
    fs::path target = dir.path / "out.pb.gz";
    REQUIRE(write_output({target.string(), true}, "first"));
    REQUIRE(write_output({target.string(), true}, "second"));
    CHECK(slurp(target) == "second");
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("heapkit::write_output fails cleanly where it cannot write") {
    TempDir dir;
    auto missing_dir = write_output({(dir.path / "no" / "such.pb.gz").string(), true}, "x");
    REQUIRE_FALSE(missing_dir);
    CHECK(missing_dir.error().message.find("such.pb.gz: cannot create output") !=
          std::string::npos);
    auto is_dir = write_output({dir.path.string(), true}, "x");
    REQUIRE_FALSE(is_dir);
    CHECK(is_dir.error().message.find("is a directory") != std::string::npos);
    auto full = write_output({"/dev/full", true}, "x");
    REQUIRE_FALSE(full);
    CHECK(full.error().message.find("/dev/full: cannot write") == 0);
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 0);
}

TEST_CASE("heapkit::OutputStream shows a file only once committed") {
    TempDir dir;
    fs::path target = dir.path / "out.folded";
    {
        OutputStream out({target.string(), false});
        REQUIRE(out.open());
        REQUIRE(out.write("a;b 1\n"));
        CHECK_FALSE(fs::exists(target));
    } // destroyed before commit: as if never written
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 0);
    OutputStream out({target.string(), false});
    REQUIRE(out.open());
    REQUIRE(out.write("a;b 1\n"));
    REQUIRE(out.write("a;c 2\n"));
    REQUIRE(out.commit());
    CHECK(slurp(target) == "a;b 1\na;c 2\n");
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
    OutputStream full({"/dev/full", false});
    REQUIRE(full.open());
    auto failed = full.write(std::string(1 << 16, 'x'));
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message.find("/dev/full: cannot write") == 0);
}

TEST_CASE("heapkit::write_output replaces a link others could have planted, never follows it") {
    TempDir dir;
    fs::path shared = dir.path / "shared";
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms::all); // 0777, as a cache someone else writes
    fs::path fifo = dir.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    fs::path link = shared / "entry";
    fs::create_symlink(fifo, link);
    REQUIRE(write_output({link.string(), false}, "bytes")); // would block on the FIFO
    CHECK_FALSE(fs::is_symlink(link));
    CHECK(slurp(link) == "bytes");
    CHECK(fs::is_fifo(fifo));
    // A cache entry (in_place false) replaces even a FIFO at its own name.
    fs::path entry = dir.path / "fifo-entry";
    REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
    REQUIRE(write_output({entry.string(), false, false, false}, "cached"));
    CHECK(slurp(entry) == "cached");
}
