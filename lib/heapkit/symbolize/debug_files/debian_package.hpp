// SPDX-License-Identifier: MIT
// Which Debian package installed a file: what to name when saying where its debug file
// is (Debian ships it in <package>-dbgsym).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// The binary package owning each of `paths` (absolute), as `dpkg-query -S` tells, without
// its architecture ("bind9-libs"); a path no package owns is left out. With merged /usr a
// file dpkg knows as /lib/x86_64-linux-gnu/libz.so.1 is mapped as /usr/lib/…: both
// spellings are asked. Empty where dpkg-query cannot be run. One dpkg-query for all paths
// not answered before: dpkg-query takes 0.2 s, ten times a warm conversion, so answers
// are kept in `cache_directory` (when not empty) per path and file modification time.
std::map<std::string, std::string> debian_packages_of(const std::vector<std::string>& paths,
                                                      const std::string& cache_directory = {});

// `dpkg-query -S` output: each line "libfoo1:amd64, libfoo-dev: /usr/lib/x" as its path
// and its first package without the architecture; other lines (diversions) left out.
struct OwnedPath {
    std::string path;
    std::string package;
};
std::vector<OwnedPath> parse_dpkg_search(const std::string& output);

// The cache file of earlier answers (`<cache>/debian-packages`): "path TAB mtime TAB
// package" lines (package empty: none owns it), mtime in ns since the epoch. Malformed
// lines are skipped; at most `most_remembered_packages` are read.
struct RememberedPackage {
    int64_t mtime = -1;
    std::string package;
};
constexpr size_t most_remembered_packages = 4096;
std::map<std::string, RememberedPackage> parse_remembered_packages(std::string_view text);

} // namespace heapkit
