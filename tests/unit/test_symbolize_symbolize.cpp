// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/symbolize.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

Module module_at(std::string path, bool is_main = false) {
    Module module;
    module.path = std::move(path);
    module.is_main = is_main;
    return module;
}

} // namespace

TEST_CASE("heapkit::locate_file applies --binary, the longest --path-map, then --sysroot") {
    SymbolizeOptions options;
    CHECK(locate_file(module_at("/srv/app"), options) == "/srv/app");

    options.sysroot = "/mnt/container";
    CHECK(locate_file(module_at("/usr/lib/libc.so.6"), options) ==
          "/mnt/container/usr/lib/libc.so.6");

    options.path_map = {{"/srv", "/home/me/build"}, {"/srv/app/lib", "/opt/libs"}};
    CHECK(locate_file(module_at("/srv/app/bin/server"), options) ==
          "/home/me/build/app/bin/server");
    CHECK(locate_file(module_at("/srv/app/lib/libx.so"), options) == "/opt/libs/libx.so");
    CHECK(locate_file(module_at("/usr/lib/libc.so.6"), options) ==
          "/mnt/container/usr/lib/libc.so.6");

    options.main_binary = "./server";
    CHECK(locate_file(module_at("/srv/app/bin/server", true), options) == "./server");
    CHECK(locate_file(module_at("/srv/app/lib/libx.so"), options) == "/opt/libs/libx.so");
}

TEST_CASE("heapkit::locate_file matches --path-map by whole path components") {
    SymbolizeOptions options;
    options.path_map = {{"/a/s", "/x"}};
    CHECK(locate_file(module_at("/a/src/b"), options) == "/a/src/b");
    CHECK(locate_file(module_at("/a/s/b"), options) == "/x/b");
    CHECK(locate_file(module_at("/a/s"), options) == "/x");

    options.path_map = {{"/a/s/", "/x/"}, {"/a/src", "/y"}};
    CHECK(locate_file(module_at("/a/s/b"), options) == "/x/b");
    CHECK(locate_file(module_at("/a/src/b"), options) == "/y/b");
    CHECK(locate_file(module_at("/a/srcs/b"), options) == "/a/srcs/b");

    options.path_map = {{"/", "/root/"}};
    CHECK(locate_file(module_at("/usr/lib/libc.so.6"), options) == "/root/usr/lib/libc.so.6");
}
