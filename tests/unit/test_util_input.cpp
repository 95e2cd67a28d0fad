// SPDX-License-Identifier: MIT
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/input.hpp"
#include "temp_dir.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>

using namespace heapkit;
namespace fs = std::filesystem;

namespace {

fs::path write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

// Some megabytes of distinct lines: pages given back must read the same again.
std::string big_text() {
    std::string text;
    for (int i = 0; i < 200000; ++i) {
        text += "@ 0x" + std::to_string(0x7f0000000000 + 16 * i) + "\n";
    }
    return text;
}

} // namespace

TEST_CASE("heapkit::InputBuffer maps a file and reads it again after giving pages back") {
    TempDir dir;
    std::string text = big_text();
    auto input = InputBuffer::open(write_file(dir.path / "a.heap", text).string());
    REQUIRE(input);
    CHECK(input->name() == (dir.path / "a.heap").string());
    REQUIRE(input->text() == text);
    input->release_before(input->text().data() + text.size() / 2);
    input->release_before(input->text().data() + text.size() / 3); // behind: nothing to do
    input->release_before(input->text().data() + text.size());
    CHECK(input->text() == text);
}

TEST_CASE("heapkit::InputBuffer inflates gzip and reads empty files") {
    TempDir dir;
    std::string text = big_text();
    auto packed = InputBuffer::open(write_file(dir.path / "a.gz", gzip(text, 1)).string());
    REQUIRE(packed);
    packed->release_before(packed->text().data() + text.size());
    CHECK(packed->text() == text);
    auto empty = InputBuffer::open(write_file(dir.path / "empty", "").string());
    REQUIRE(empty);
    CHECK(empty->text().empty());
}

TEST_CASE("heapkit::InputBuffer and read_input report what they cannot read") {
    TempDir dir;
    auto missing = InputBuffer::open((dir.path / "missing").string());
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("missing: cannot open: ") != std::string::npos);
    auto directory = InputBuffer::open(dir.path.string());
    REQUIRE_FALSE(directory);
    CHECK(directory.error().message == dir.path.string() + ": is a directory, not a heap profile");
    auto corrupt = InputBuffer::open(write_file(dir.path / "bad.gz", "\x1f\x8b junk").string());
    REQUIRE_FALSE(corrupt);
    CHECK(read_input((dir.path / "missing").string()).error().message == missing.error().message);
}
