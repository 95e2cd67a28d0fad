// SPDX-License-Identifier: MIT
#pragma once

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <string>

// A fresh directory, removed with everything in it at the end of the test case.
struct TempDir {
    std::filesystem::path path;

    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "heapkit-test-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};
