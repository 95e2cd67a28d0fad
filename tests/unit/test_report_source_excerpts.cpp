// SPDX-License-Identifier: MIT
#include "heapkit/report/report_data.hpp"
#include "heapkit/report/source_excerpts.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using heapkit::append_json_string;
using heapkit::append_source_excerpts;
using heapkit::ExcerptLimits;
using heapkit::SourceFile;

namespace {

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "excerpts-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

std::string lines_file(const std::filesystem::path& path, int count) {
    std::ofstream out(path);
    for (int i = 1; i <= count; ++i) {
        out << "line " << i << "\n";
    }
    return path.string();
}

} // namespace

TEST_CASE("heapkit::append_json_string escapes what would end a <script> or break JSON") {
    std::string out;
    append_json_string(out, "a\"b\\c</script><!--\n\x01");
    CHECK(out == R"("a\"b\\c\u003c/script\u003e\u003c!--\u000a\u0001")");
}

TEST_CASE("heapkit::append_source_excerpts shows lines around the named ones, merged") {
    TempDir dir;
    SourceFile file{lines_file(dir.path / "a.c", 30), {5, 8, 20}, {}};
    std::string out;
    append_source_excerpts(out, {{7, file}}, ExcerptLimits{2, 1 << 20, 1 << 20, 240});
    // 5 and 8 with two lines each side meet (3..10); 20 stands alone (18..22).
    CHECK(out.find(R"("ranges":[[3,["line 3","line 4","line 5","line 6","line 7","line 8",)"
                   R"("line 9","line 10"]],[18,["line 18","line 19","line 20","line 21",)"
                   R"("line 22"]]])") != std::string::npos);
    CHECK(out.find("\"sourceMissing\":[]") != std::string::npos);
}

TEST_CASE("heapkit::append_source_excerpts finds a relative name under a module's directories") {
    TempDir dir;
    std::filesystem::create_directories(dir.path / "src");
    std::filesystem::create_directories(dir.path / "build" / "bin");
    lines_file(dir.path / "src" / "b.c", 3);
    // As DWARF names it, relative to the build directory: bin's parent.
    SourceFile file{"../src/b.c", {2}, {(dir.path / "build" / "bin").string()}};
    std::string out;
    append_source_excerpts(out, {{1, file}}, ExcerptLimits{});
    CHECK(out.find("\"path\":\"" + (dir.path / "src" / "b.c").string() + "\"") !=
          std::string::npos);
}

TEST_CASE(
    "heapkit::append_source_excerpts reads no FIFO, no large file, and says where it looked") {
    TempDir dir;
    std::string fifo = (dir.path / "fifo.c").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0); // opening it to read would wait for a writer
    std::string large = lines_file(dir.path / "large.c", 100);
    std::string out;
    append_source_excerpts(out,
                           {{1, SourceFile{fifo, {1}, {}}},
                            {2, SourceFile{large, {1}, {}}},
                            {3, SourceFile{(dir.path / "absent.c").string(), {1}, {}}}},
                           ExcerptLimits{3, 64, 1 << 20, 240});
    CHECK(out.find("\"sourceFiles\":[]") != std::string::npos);
    CHECK(out.find("{\"file\":1,\"looked\":[\"" + fifo + "\"]}") != std::string::npos);
    CHECK(out.find("{\"file\":2,") != std::string::npos);
    CHECK(out.find("{\"file\":3,") != std::string::npos);
}

TEST_CASE("heapkit::append_source_excerpts stops taking text when the report's room is full") {
    TempDir dir;
    std::string a = lines_file(dir.path / "a.c", 50);
    std::string b = lines_file(dir.path / "b.c", 50);
    std::string out;
    append_source_excerpts(out, {{1, SourceFile{a, {10}, {}}}, {2, SourceFile{b, {10}, {}}}},
                           ExcerptLimits{3, 1 << 20, 20, 240});
    CHECK(out.find("{\"file\":1,\"path\"") != std::string::npos);
    CHECK(out.find("{\"file\":2,\"looked\":[\"" + b + "\"],\"full\":true}") != std::string::npos);
}
