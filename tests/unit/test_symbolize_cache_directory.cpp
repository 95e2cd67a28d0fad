// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/cache_directory.hpp"
#include "temp_dir.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace heapkit;
namespace fs = std::filesystem;

namespace {

// Only the temporary directory is left to fall back to: no configured cache, no
// $XDG_CACHE_HOME nor $HOME, $TMPDIR set to `tmp` for the call (TempDir reads it too).
std::string fallback_under(const fs::path& tmp, std::string& reason) {
    ::unsetenv("XDG_CACHE_HOME");
    ::unsetenv("HOME");
    const char* was = std::getenv("TMPDIR");
    std::string before = was != nullptr ? was : "";
    ::setenv("TMPDIR", tmp.c_str(), 1);
    reason.clear();
    std::string found = writable_cache_directory("", reason);
    if (was != nullptr) {
        ::setenv("TMPDIR", before.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
    return found;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

} // namespace

TEST_CASE("heapkit::writable_cache_directory falls back to one directory per user, reused") {
    TempDir tmp;
    std::string own = (tmp.path / fmt::format("heapkit-cache-{}", ::geteuid())).string();
    std::string reason;
    CHECK(fallback_under(tmp.path, reason) == own);
    CHECK(mode_of(own) == 0700);
    CHECK(fallback_under(tmp.path, reason) == own); // a second start: the same one
    CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);
    ::chmod(own.c_str(), 0755); // ours, but open to others: closed again
    CHECK(fallback_under(tmp.path, reason) == own);
    CHECK(mode_of(own) == 0700);
}

TEST_CASE("heapkit::writable_cache_directory uses no fallback that is a link or not ours") {
    TempDir tmp;
    std::string own = (tmp.path / fmt::format("heapkit-cache-{}", ::geteuid())).string();
    fs::create_directory(tmp.path / "elsewhere");
    fs::create_directory_symlink(tmp.path / "elsewhere", own);
    std::string reason;
    CHECK(fallback_under(tmp.path, reason).empty());
    CHECK(reason == own + ": a symbolic link: no cache is kept");
    if (::geteuid() == 0) {
        fs::remove(own);
        fs::create_directory(own);
        REQUIRE(::chown(own.c_str(), 65534, 65534) == 0);
        CHECK(fallback_under(tmp.path, reason).empty());
        CHECK(reason == own + " belongs to uid 65534, not to uid 0: no cache is kept");
    }
}
