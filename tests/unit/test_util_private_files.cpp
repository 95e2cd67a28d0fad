// SPDX-License-Identifier: MIT
#include "heapkit/util/private_files.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace heapkit;
namespace fs = std::filesystem;

TEST_CASE("heapkit::check_private_directory refuses a directory others may write") {
    TempDir dir;
    std::string path = (dir.path / "cache").string();
    REQUIRE(make_private_directory(path));
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    ::chmod(path.c_str(), 0777);
    auto open = check_private_directory(path);
    REQUIRE_FALSE(open);
    CHECK(open.error().message == path + ": others may write to it (mode 0777, no sticky bit)");
    ::chmod(path.c_str(), 01777); // sticky, as /tmp
    CHECK(check_private_directory(path));
    auto missing = check_private_directory(path + "/none");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().system_error == ENOENT);
}

TEST_CASE("heapkit::check_sole_directory refuses what others may write, sticky or not") {
    TempDir dir;
    std::string path = (dir.path / "peaks").string();
    REQUIRE(make_sole_directory(path));
    for (mode_t mode : {01777, 0777, 0770, 01730}) {
        ::chmod(path.c_str(), mode);
        auto open = check_sole_directory(path);
        REQUIRE_FALSE(open);
        CHECK(open.error().message.starts_with(path + ": others may write to it"));
    }
    ::chmod(path.c_str(), 01777);
    CHECK(check_sole_directory(path).error().message ==
          path + ": others may write to it (mode 1777); it must be this user's alone (a "
                 "directory of its own, mode 0700)");
    ::chmod(path.c_str(), 0755);
    CHECK(check_sole_directory(path));
}

TEST_CASE("heapkit::read_regular_file reads only a regular file, never through a link") {
    TempDir dir;
    fs::path file = dir.path / "entry";
    std::ofstream(file) << "cached";
    CHECK(*read_regular_file(file.string(), 100) == "cached");
    CHECK_FALSE(read_regular_file(file.string(), 3)); // longer than allowed
    fs::path link = dir.path / "link";
    fs::create_symlink(file, link);
    auto linked = read_regular_file(link.string(), 100);
    REQUIRE_FALSE(linked);
    CHECK(linked.error().message == link.string() + ": cannot open: a symbolic link");
    fs::path fifo = dir.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto piped = read_regular_file(fifo.string(), 100); // returns at once: O_NONBLOCK
    REQUIRE_FALSE(piped);
    CHECK(piped.error().message == fifo.string() + ": not a regular file");
}
