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

// The binary package owning each of `paths` (absolute), as dpkg's file lists
// (/var/lib/dpkg/info/<package>[:<arch>].list) tell, without its architecture
// ("bind9-libs"); a path no package owns is left out. With merged /usr a file dpkg knows
// as /lib/x86_64-linux-gnu/libz.so.1 is mapped as /usr/lib/…: both spellings are looked
// for. The lists whose package is named like the file ("libpython3.11" for
// libpython3.11.so.1.0) are read first, the others only for paths still unowned:
// `dpkg-query -S` read every list (0.2 s and 37 MB, more than a whole command on a
// small dump) to name a package in a hint. Answers are kept in `cache_directory` (when
// not empty) per path and file modification time.
std::map<std::string, std::string> debian_packages_of(const std::vector<std::string>& paths,
                                                      const std::string& cache_directory = {});

// The package a dpkg file list is of, from its file name ("libfoo1:amd64.list" is
// libfoo1's); empty for another file.
std::string_view package_of_list(std::string_view file_name);

// True when the dpkg file list `list` (one path a line) holds `path`.
bool list_holds(std::string_view list, std::string_view path);

// Debian's debug archive as apt sees it here, for the advice that names -dbgsym
// packages: the release (VERSION_CODENAME of /etc/os-release when its ID is debian;
// empty otherwise) and whether a source of /etc/apt names debian-debug already.
struct DebugArchive {
    std::string codename;
    bool listed = false;
};
DebugArchive debian_debug_archive();

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
