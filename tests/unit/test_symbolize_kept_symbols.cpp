// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/kept_symbols.hpp"

#include <cerrno>
#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

using namespace heapkit;

namespace {

// A directory of its own under $TMPDIR, removed afterwards.
struct TempDir {
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "kept-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::filesystem::path path;
};

} // namespace

TEST_CASE("heapkit::KeptSymbols opens a file once, and again when another file takes its path") {
    TempDir dir;
    std::string path = (dir.path / "app").string();
    std::filesystem::copy_file(built_file("twin_o1"), path);
    KeptSymbols kept({}, 1000, 10);

    const OpenedFile& first = kept.open(path);
    REQUIRE(first.file);
    std::string first_build = first.file->build_id();
    CHECK(&kept.open(path) == &first);
    CHECK(kept.stats().opened == 1);
    CHECK(kept.stats().files == 1);

    // Replaced, as a deploy replaces a binary: a new inode (and size) at the same path.
    std::filesystem::remove(path);
    std::filesystem::copy_file(built_file("twin_extra"), path);
    const OpenedFile& second = kept.open(path);
    REQUIRE(second.file);
    CHECK(second.file->build_id() != first_build);
    CHECK(kept.stats().opened == 2);

    // A failure is not kept: the next call tries again (here, a file appeared).
    std::string missing = (dir.path / "missing").string();
    CHECK_FALSE(kept.open(missing).file);
    CHECK_FALSE(kept.open(missing).error.message.empty());
    CHECK(kept.open(missing).error.system_error == ENOENT);
    std::filesystem::copy_file(built_file("twin_o1"), missing);
    CHECK(kept.open(missing).file);
    // Nor is one that the file's identity would not show: out of descriptors (EMFILE),
    // then not.
    std::string later = (dir.path / "later").string();
    std::filesystem::copy_file(built_file("twin_o1"), later);
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    rlimit none = limit;
    none.rlim_cur = 3; // standard input, output and error: no descriptor left
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
    const OpenedFile& starved = kept.open(later);
    bool opened_without_descriptors = static_cast<bool>(starved.file);
    int why = starved.error.system_error;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);
    CHECK_FALSE(opened_without_descriptors);
    CHECK(why == EMFILE); // typed, for the runtime to refuse a half-named answer
    CHECK(kept.open(later).file);
}

TEST_CASE("heapkit::KeptSymbols keeps answers with their own texts, up to its bound") {
    KeptSymbols kept({}, 2, 10);
    {
        std::string name = "handle_request";
        std::string file = "server.cc";
        Frame frame;
        frame.name = name;
        frame.system_name = name;
        frame.file = file;
        frame.line = 42;
        kept.add("build-a", 0x1000, {&frame, 1});
        name.assign(name.size(), 'x'); // the caller's texts change or go: kept ones stay
        file.clear();
    }
    auto hit = kept.find("build-a", 0x1000);
    REQUIRE(hit);
    REQUIRE(hit->size() == 1);
    CHECK((*hit)[0].name == "handle_request");
    CHECK((*hit)[0].file == "server.cc");
    CHECK((*hit)[0].line == 42);
    CHECK_FALSE(kept.find("build-a", 0x2000));
    CHECK_FALSE(kept.find("build-b", 0x1000));
    CHECK(kept.stats().hits == 1);
    CHECK(kept.stats().misses == 2);

    kept.add("build-a", 0x2000, {});
    kept.trim(); // two answers: at the bound, kept
    CHECK(kept.find("build-a", 0x2000));
    kept.add("build-b", 0x3000, {});
    kept.trim(); // three: over it, all dropped
    CHECK(kept.stats().frames == 0);
    CHECK(kept.stats().dropped == 1);
    CHECK_FALSE(kept.find("build-a", 0x1000));
}

// True when this process has a descriptor open on `path`.
bool has_open(const std::string& path) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        if (std::filesystem::read_symlink(entry.path(), error) == path && !error) {
            return true;
        }
    }
    return false;
}

TEST_CASE("heapkit::KeptSymbols::close_files closes the files whose DWARF was not read") {
    TempDir dir;
    std::string indexed = (dir.path / "indexed").string();
    std::string read_here = (dir.path / "read_here").string();
    std::filesystem::copy_file(built_file("twin_o1"), indexed);
    std::filesystem::copy_file(built_file("twin_o1"), read_here);
    KeptSymbols kept({}, 1000, 10);
    const ElfModule* first = kept.open(indexed).file.get();
    const ElfModule* second = kept.open(read_here).file.get();
    REQUIRE(first != nullptr);
    REQUIRE(second != nullptr);
    REQUIRE(second->has_dwarf()); // as a call without an address index reads it
    CHECK(has_open(indexed));
    CHECK(has_open(read_here));

    kept.close_files();
    CHECK_FALSE(has_open(indexed));
    CHECK(has_open(read_here)); // reading its DWARF again would cost every call
    // Kept all the same: the next call finds it without opening it again.
    CHECK(kept.open(indexed).file.get() == first);
    CHECK(kept.stats().opened == 2);
    CHECK(kept.stats().files == 2);
    CHECK_FALSE(has_open(indexed));
}

TEST_CASE("heapkit::KeptSymbols fits the searches it was made for") {
    SymbolizeOptions options;
    options.debug_dirs = {"/opt/debug"};
    KeptSymbols kept(options, 10, 10);
    CHECK(kept.fits(options));
    SymbolizeOptions other = options;
    other.sysroot = "/mnt/root";
    CHECK_FALSE(kept.fits(other));
    other = options;
    other.debug_dirs.clear();
    CHECK_FALSE(kept.fits(other));
}
