// SPDX-License-Identifier: MIT
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
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == "/lib/libbare.so: 2 of 40 addresses have no name: no symbol table: "
                      "install its debug package, or pass its debug directory; build id a50d");
    CHECK(lines[1] == "/lib/libsym.so: 1 of 1 address has no name: they lie outside every "
                      "symbol of its .symtab, and it has no .debug_info: its debug package may "
                      "name them; build id a50d");
    CHECK(lines[2] == "/srv/app: 1 of 9 addresses has no name: they lie outside every function "
                      "its .symtab and .debug_info know");
    CHECK(lines[3] == "/srv/gone.so: 3 of 3 addresses have no name: /root/srv/gone.so: cannot "
                      "open: No such file or directory; point to a copy of the file");
    CHECK(lines[4] == "/srv/lib.so: 1 of 2 addresses has no name: /x/lib.so: its layout does "
                      "not fit; point to the build that ran");
}

TEST_CASE("heapkit::describe_unnamed lists the addresses when asked, as frames print them") {
    std::vector<ModuleReport> modules{module("/lib/libbare.so", 40, {0x1a2b, 0x1a30})};
    const std::vector<uint64_t> unmapped{0x7f0012345678};
    std::vector<std::string> lines = describe_unnamed(modules, unmapped, true);
    REQUIRE(lines.size() == 5);
    CHECK(lines[1] == "/lib/libbare.so: no name at libbare.so+0x1a2b");
    CHECK(lines[2] == "/lib/libbare.so: no name at libbare.so+0x1a30");
    CHECK(lines[3] == "1 address lies in no executable mapping of the dump, without a name");
    CHECK(lines[4] == "no mapping, no name at 0x7f0012345678");
    CHECK(describe_unnamed(modules, unmapped, false).size() == 2);
    CHECK(describe_unnamed({}, {}, true).empty());
}
