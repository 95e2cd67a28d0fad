// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/debug_files/debian_package.hpp"
#include "heapkit/symbolize/module_report.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

ModuleReport module(std::string path, size_t addresses, std::vector<uint64_t> unnamed) {
    ModuleReport report;
    report.path = std::move(path);
    report.build_id = "a50d";
    report.addresses = addresses;
    report.unnamed = std::move(unnamed);
    return report;
}

} // namespace

TEST_CASE("heapkit::describe_unnamed says per module what the file lacks and what to do") {
    std::vector<ModuleReport> modules;
    modules.push_back(module("/lib/libbare.so", 40, {0x1a2b, 0x1a30}));
    modules.push_back(module("/lib/libnamed.so", 12, {})); // nothing to say
    ModuleReport symbols_only = module("/lib/libsym.so", 1, {0x10});
    symbols_only.has_symtab = true;
    modules.push_back(symbols_only);
    ModuleReport full = module("/srv/app", 9, {0x20});
    full.has_symtab = full.has_debug_info = true;
    modules.push_back(full);
    ModuleReport missing = module("/srv/gone.so", 3, {0x1, 0x2, 0x3});
    missing.build_id.clear();
    missing.problem = FileProblem::missing;
    missing.problem_text = "/root/srv/gone.so: cannot open: No such file or directory";
    modules.push_back(missing);
    ModuleReport other = module("/srv/lib.so", 2, {0x5});
    other.build_id.clear();
    other.problem = FileProblem::other_build;
    other.problem_text = "/x/lib.so: its layout does not fit";
    modules.push_back(other);

    std::vector<std::string> lines = describe_unnamed(modules, {}, false);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "2 files without debug information (libbare.so, libsym.so) leave 3 addresses "
                      "without a name: pass "
                      "their debug files' directory (--debug-dir), or set "
                      "DEBUGINFOD_URLS=https://debuginfod.debian.net (--verbose says which file "
                      "holds what)");
    CHECK(lines[1] == "/srv/app: 1 of 9 addresses has no name: they lie outside every function "
                      "its .symtab and .debug_info know");
    CHECK(lines[2] == "/srv/gone.so: 3 of 3 addresses have no name: /root/srv/gone.so: cannot "
                      "open: No such file or directory; point to a copy of the file (--binary "
                      "for the program, --path-map OLD=NEW for a directory)");
    CHECK(lines[3] == "/srv/lib.so: 1 of 2 addresses has no name: /x/lib.so: its layout does "
                      "not fit; point to the build that ran (--binary, --path-map)");

    // --verbose: the files without debug information get their own lines too.
    lines = describe_unnamed(modules, {}, true);
    REQUIRE(lines.size() == 14);
    CHECK(lines[1] == "/lib/libbare.so: 2 of 40 addresses have no name: no symbol table; "
                      "install its debug package, or pass its debug directory (--debug-dir), "
                      "or set DEBUGINFOD_URLS=https://debuginfod.debian.net (Debian's server); "
                      "build id a50d");
    CHECK(lines[4] == "/lib/libsym.so: 1 of 1 address has no name: they lie outside every "
                      "symbol of its .symtab, and it has no .debug_info; install its debug "
                      "package, or pass its debug directory (--debug-dir), or set "
                      "DEBUGINFOD_URLS=https://debuginfod.debian.net (Debian's server); "
                      "build id a50d");
}

TEST_CASE("heapkit::describe_unnamed says the share of the profile under unnamed addresses") {
    std::vector<ModuleReport> modules{module("/lib/libbare.so", 40, {0x1a2b}),
                                      module("/lib/libsym.so", 1, {0x10})};
    modules[0].unnamed_value = 100;
    modules[1].unnamed_value = 50;
    modules[1].has_symtab = true;
    UnnamedShare share{1000, 125, "bytes in use"}; // a stack through both counts once
    std::vector<std::string> lines = describe_unnamed(modules, {}, true, {}, share);
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].starts_with("2 files without debug information (libbare.so, libsym.so) leave 2 "
                               "addresses without a name, under 12.5% of the bytes in use: "));
    CHECK(lines[1].starts_with("/lib/libbare.so: 1 of 40 addresses has no name, under 10.0% of "
                               "the bytes in use: no symbol table; "));
    CHECK(lines[3].starts_with("/lib/libsym.so: 1 of 1 address has no name, under 5.0% of the "
                               "bytes in use: "));
}

TEST_CASE("heapkit::describe_unnamed lists the addresses when asked, as frames print them") {
    std::vector<ModuleReport> modules{module("/lib/libbare.so", 40, {0x1a2b, 0x1a30})};
    const std::vector<uint64_t> unmapped{0x7f0012345678};
    std::vector<std::string> lines = describe_unnamed(modules, unmapped, true);
    REQUIRE(lines.size() == 6);
    CHECK(lines[2] == "/lib/libbare.so: no name at libbare.so+0x1a2b");
    CHECK(lines[3] == "/lib/libbare.so: no name at libbare.so+0x1a30");
    CHECK(lines[4] == "1 address lies in no executable mapping of the dump, without a name");
    CHECK(lines[5] == "no mapping, no name at 0x7f0012345678");
    CHECK(describe_unnamed(modules, unmapped, false).size() == 2);
    CHECK(describe_unnamed({}, {}, true).empty());
}

namespace {

ModuleReport stripped_isc() {
    ModuleReport isc = module("/usr/lib/x86_64-linux-gnu/libisc-9.18.so", 216, {0x4ada4, 0x4adc0});
    isc.has_dynsym = true;
    isc.package = "bind9-libs";
    isc.unnamed_functions = {0x4ad80};
    return isc;
}

} // namespace

TEST_CASE("heapkit::describe_unnamed says how apt gets the -dbgsym packages, in one line") {
    std::vector<ModuleReport> modules{stripped_isc()};
    std::vector<std::string> lines = describe_unnamed(modules, {}, false);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "1 file without debug information (libisc-9.18.so) leaves 2 addresses "
                      "without a name: add Debian's debug archive (the line 'deb "
                      "http://deb.debian.org/debian-debug/ <release>-debug main' in "
                      "/etc/apt/sources.list.d/debug.list, then apt update) and apt install "
                      "bind9-libs-dbgsym, or set DEBUGINFOD_URLS=https://debuginfod.debian.net "
                      "(--verbose says which file holds what)");
    UnnamedHints bookworm{false, "bookworm", false};
    CHECK(describe_unnamed(modules, {}, false, bookworm)[0].find(
              "'deb http://deb.debian.org/debian-debug/ bookworm-debug main'") !=
          std::string::npos);
    UnnamedHints listed{true, "bookworm", true};
    CHECK(describe_unnamed(modules, {}, false, listed)[0].ends_with(
        "without a name: apt install bind9-libs-dbgsym (the servers of DEBUGINFOD_URLS had "
        "none) (--verbose says which file holds what)"));
    // Many packages: the first few by share, the rest counted.
    modules.clear();
    for (int i = 0; i < 8; ++i) {
        ModuleReport each = stripped_isc();
        each.path += std::to_string(i);
        each.package = "pkg" + std::to_string(i);
        each.unnamed_value = i;
        modules.push_back(each);
    }
    CHECK(describe_unnamed(modules, {}, false, listed)[0].find(
              "apt install pkg7-dbgsym pkg6-dbgsym pkg5-dbgsym pkg4-dbgsym pkg3-dbgsym "
              "pkg2-dbgsym (and 2 more, --verbose names them)") != std::string::npos);
}

TEST_CASE("heapkit::stripped_notes names each stripped module and how to get its names") {
    ModuleReport full = module("/srv/app", 9, {0x20});
    full.has_dynsym = full.has_symtab = true;
    ModuleReport named = stripped_isc();
    named.unnamed.clear(); // stripped, but every address it has is exported: nothing to say
    std::vector<ModuleReport> modules{stripped_isc(), full, named};
    CHECK(is_stripped(modules[0]));
    CHECK(!is_stripped(full));
    CHECK(!is_stripped(named));
    CHECK(stripped_notes(modules) ==
          std::vector<std::string>{"libisc-9.18.so: no symbols beyond .dynsym (stripped); apt "
                                   "install bind9-libs-dbgsym, or set DEBUGINFOD_URLS"});
}

TEST_CASE("heapkit::describe_unnamed tells exported symbols from none, and names the package") {
    std::vector<ModuleReport> modules{stripped_isc()};
    std::vector<std::string> lines = describe_unnamed(modules, {}, true);
    REQUIRE(lines.size() == 4);
    CHECK(lines[1] == "/usr/lib/x86_64-linux-gnu/libisc-9.18.so: 2 of 216 addresses have no "
                      "name: stripped: only its exported symbols (.dynsym) name code, and these "
                      "lie in functions it does not export; they are shown as "
                      "libisc-9.18.so!0x<start of their function>, one frame per function (1 "
                      "function); its debug file is in Debian's bind9-libs-dbgsym package (the "
                      "debian-debug archive), or set DEBUGINFOD_URLS=https://debuginfod.debian.net "
                      "(Debian's server); build id a50d");
    lines = describe_unnamed(modules, {}, true, UnnamedHints{true, {}, false});
    CHECK(lines[1].find("the debuginfod servers of DEBUGINFOD_URLS had none; build id") !=
          std::string::npos);
    CHECK(lines[1].find("no symbol table") == std::string::npos);
}

TEST_CASE("heapkit::merge_module_reports tells each file once, its addresses together") {
    ModuleReport first = module("/lib/libbare.so", 2, {0x10});
    first.offsets = {0x10, 0x20};
    ModuleReport second = module("/lib/libbare.so", 3, {0x10, 0x30});
    second.offsets = {0x10, 0x30, 0x40};
    std::vector<ModuleReport> modules{first};
    merge_module_reports(modules, {second, module("/lib/other.so", 1, {0x1})});
    REQUIRE(modules.size() == 2);
    CHECK(modules[0].offsets == std::vector<uint64_t>{0x10, 0x20, 0x30, 0x40});
    CHECK(modules[0].addresses == 4);
    CHECK(modules[0].unnamed == std::vector<uint64_t>{0x10, 0x30});
    CHECK(describe_unnamed(modules, {}, false).size() == 1); // one summary for both files
}

TEST_CASE("heapkit::list_holds and package_of_list read dpkg's file lists") {
    std::string_view list = "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libz.so.1.2.13\n"
                            "/usr/lib/x86_64-linux-gnu/libz.so.1\n";
    CHECK(list_holds(list, "/usr/lib/x86_64-linux-gnu/libz.so.1"));
    CHECK(list_holds(list, "/."));
    CHECK_FALSE(list_holds(list, "/usr/lib/x86_64-linux-gnu/libz.so")); // a prefix
    CHECK_FALSE(list_holds(list, "lib/x86_64-linux-gnu/libz.so.1"));    // a suffix
    CHECK_FALSE(list_holds("", "/usr"));
    CHECK(package_of_list("zlib1g:amd64.list") == "zlib1g");
    CHECK(package_of_list("libfoo-dev.list") == "libfoo-dev");
    CHECK(package_of_list("zlib1g:amd64.md5sums").empty());
    CHECK(package_of_list(".list").empty());
}
