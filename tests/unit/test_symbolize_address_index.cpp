// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/frame_strings.hpp"
#include "heapkit/symbolize/index/address_index.hpp"
#include "heapkit/symbolize/index/address_index_builder.hpp"

#include <cstdio>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <random>
#include <string>

using namespace heapkit;

namespace {

std::string describe(const std::vector<Frame>& frames) {
    std::string text;
    for (const Frame& frame : frames) {
        text += fmt::format("[{} | {} | {}:{}:{} from {}] ", frame.name, frame.system_name,
                            frame.file, frame.line, frame.column, frame.start_line);
    }
    return text.empty() ? "(none)" : text;
}

std::unique_ptr<ElfModule> open_file(const std::string& path, const DebugSearch& search) {
    auto opened = ElfModule::open(path, search);
    REQUIRE_MESSAGE(opened, opened.error().message);
    return std::move(*opened);
}

// The addresses compared: each range's first, middle and last address (every range, or
// an even spread of `most` of them), and `most` more at random over the code. Counts how
// many were compared.
std::vector<uint64_t> addresses_to_compare(const AddressIndex& index, const ElfModule& file,
                                           size_t most) {
    std::vector<uint64_t> addresses;
    size_t ranges = index.range_count() - 1; // the last one only ends the others
    size_t step = std::max<size_t>(1, ranges / most);
    for (size_t i = 0; i < ranges; i += step) {
        uint64_t start = index.range_start(i);
        uint64_t end = index.range_start(i + 1);
        addresses.insert(addresses.end(), {start, start + (end - start) / 2, end - 1});
    }
    std::mt19937_64 random(42);
    for (const auto& [start, end] : file.code_extents()) {
        std::uniform_int_distribution<uint64_t> pick(start, end - 1);
        for (size_t i = 0; i < most / file.code_extents().size(); ++i) {
            addresses.push_back(pick(random));
        }
    }
    return addresses;
}

// Builds `path`'s index and compares its answer at many addresses with frames_at's, from
// a second opening of the file (libdw's answers as the symbolizer gives them today).
void check_index_agrees(const std::string& path, size_t most) {
    DebugSearch search({});
    auto built_from = open_file(path, search);
    std::string bytes = build_address_index(*built_from, built_from->build_id());
    auto index = AddressIndex::open(bytes, path);
    REQUIRE_MESSAGE(index, index.error().message);
    CHECK(index->build_id() == built_from->build_id());
    CHECK(index->dwarf() == built_from->has_dwarf());

    auto truth = open_file(path, search);
    StringPool pool;
    FrameStrings strings(pool);
    size_t compared = 0;
    size_t named = 0;
    for (uint64_t vaddr : addresses_to_compare(*index, *truth, most)) {
        auto answer = index->frames_at(vaddr);
        REQUIRE(answer);
        std::vector<Frame> expected = truth->frames_at(vaddr, strings);
        INFO(path, " at 0x", fmt::format("{:x}", vaddr));
        REQUIRE(describe(*answer) == describe(expected));
        ++compared;
        named += expected.empty() ? 0 : 1;
    }
    MESSAGE(path, ": ", compared, " addresses agree (", named, " named), ", index->range_count(),
            " ranges, ", bytes.size(), " bytes");
    CHECK(named > compared / 20); // the comparison was about names, not empty answers
}

Frame frame(std::string_view name, std::string_view file, uint32_t line) {
    return Frame{name, name, file, line, 3, 1};
}

} // namespace

TEST_CASE("heapkit::AddressIndex answers each range's frames and nothing outside") {
    std::vector<AnsweredRange> ranges = {
        {0x1000, {frame("inner", "a.h", 7), frame("outer", "a.c", 20)}},
        {0x1010, {}},
        {0x1020, {frame("outer", "a.c", 21)}},
    };
    std::string bytes = encode_address_index("abcd", true, ranges, 0x1030);
    auto index = AddressIndex::open(bytes, "t");
    REQUIRE_MESSAGE(index, index.error().message);
    CHECK(index->build_id() == "abcd");
    CHECK(index->dwarf());
    CHECK(describe(*index->frames_at(0x1000)) == describe(ranges[0].frames));
    CHECK(describe(*index->frames_at(0x100f)) == describe(ranges[0].frames));
    CHECK(index->frames_at(0x1010)->empty());
    CHECK(describe(*index->frames_at(0x102f)) == describe(ranges[2].frames));
    CHECK(index->frames_at(0xfff)->empty());  // below the first range
    CHECK(index->frames_at(0x1030)->empty()); // at the end
    CHECK(index->frames_at(UINT64_MAX)->empty());
}

TEST_CASE("heapkit::AddressIndex::open refuses damaged and foreign bytes") {
    std::vector<AnsweredRange> ranges = {{0x1000, {frame("f", "a.c", 1)}}};
    std::string bytes = encode_address_index("abcd", false, ranges, 0x1010);
    REQUIRE(AddressIndex::open(bytes, "t"));
    for (size_t size : {size_t{0}, size_t{8}, size_t{63}, size_t{64}, bytes.size() - 1}) {
        auto cut = AddressIndex::open(std::string_view(bytes).substr(0, size), "cut.idx");
        REQUIRE_FALSE(cut);
        CHECK(cut.error().message.starts_with("cut.idx: "));
    }
    std::string other_version = bytes;
    other_version[8] = 99;
    CHECK_FALSE(AddressIndex::open(other_version, "t"));
    CHECK_FALSE(AddressIndex::open(bytes + "x", "t"));
    // A chain pointing past the chains section: an error at the lookup, not a read.
    std::string bad_chain = bytes;
    uint32_t far = 1000;
    std::memcpy(bad_chain.data() + 64 + 8, &far, sizeof far);
    auto damaged = AddressIndex::open(bad_chain, "t");
    REQUIRE(damaged);
    CHECK_FALSE(damaged->frames_at(0x1000));
}

TEST_CASE("heapkit::build_address_index answers as frames_at on the C and C++ fixtures") {
    for (const char* name : {"alloc_cpp", "inline_cpp", "scopes_cpp", "alloc_c_nopie"}) {
        check_index_agrees(built_file(name), 100000);
    }
    check_index_agrees(built_file("liblabels_fixture.stripped.so"), 100000); // symbols only
}

// Real distribution modules: glibc and CPython with their separate debug files
// (libc6-dbg's compressed DWARF; python3.11-dbg ships the interpreter's), and a stripped
// program named by its exported symbols alone.
TEST_CASE("heapkit::build_address_index answers as frames_at on distribution modules") {
    struct Case {
        const char* path;
        const char* package;
        bool needs_dwarf;
    };
    for (const Case& c : {Case{"/lib/x86_64-linux-gnu/libc.so.6", "libc6-dbg", true},
                          Case{"/usr/bin/python3.11", "python3.11-dbg", true},
                          Case{"/usr/lib/x86_64-linux-gnu/libcurl.so.4", "libcurl4", false}}) {
        if (!std::filesystem::exists(c.path)) {
            MESSAGE("skipped ", c.path, ": not installed (tests/install-packages.sh installs ",
                    c.package, ")");
            continue;
        }
        DebugSearch search({});
        auto probe = open_file(c.path, search);
        if (c.needs_dwarf && !probe->has_dwarf()) {
            MESSAGE("skipped ", c.path, ": no DWARF found (install ", c.package, ")");
            continue;
        }
        check_index_agrees(c.path, 20000);
    }
}

namespace {

// llvm-symbolizer's function names at ELF vaddr `vaddr` of `path`, innermost first (the
// ground truth of the inline chains below); empty when it cannot be run.
std::vector<std::string> llvm_names(const std::string& path, uint64_t vaddr) {
    std::string command = fmt::format("llvm-symbolizer --obj='{}' 0x{:x} 2>/dev/null", path, vaddr);
    std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), &pclose);
    std::vector<std::string> names;
    char line[4096];
    for (bool is_name = true; pipe && std::fgets(line, sizeof line, pipe.get());
         is_name = !is_name) {
        std::string text(line);
        if (text == "\n") {
            break;
        }
        if (is_name) {
            names.push_back(text.substr(0, text.find('\n')));
        }
    }
    return names;
}

// The frames' names, without the suffixes of GCC's clones ("atom_rule.lto_priv.0", the
// symbol's name, is shown as atom_rule: emit/stacks/clone_names.hpp), as DWARF and
// llvm-symbolizer spell them.
std::vector<std::string> names_of(const std::vector<Frame>& frames) {
    std::vector<std::string> names;
    for (const Frame& frame : frames) {
        std::string_view name = frame.name;
        for (std::string_view suffix : {".lto_priv.", ".constprop.", ".isra.", ".part."}) {
            name = name.substr(0, name.find(suffix));
        }
        names.emplace_back(name);
    }
    return names;
}

// At each of `vaddrs` of `path`, the chain of frames_at (libdw, walked) and of the
// index's walk (painted) names the functions llvm-symbolizer names.
void check_chains_like_llvm(const std::string& path, const std::vector<uint64_t>& vaddrs) {
    DebugSearch search({});
    auto file = open_file(path, search);
    StringPool pool;
    FrameStrings strings(pool);
    for (uint64_t vaddr : vaddrs) {
        std::vector<std::string> truth = llvm_names(path, vaddr);
        REQUIRE_MESSAGE(!truth.empty(), "llvm-symbolizer gave nothing for ", path);
        INFO(path, " at 0x", fmt::format("{:x}", vaddr));
        std::string expected = fmt::format("{}", fmt::join(truth, " in "));
        CHECK(fmt::format("{}", fmt::join(names_of(file->frames_at(vaddr, strings)), " in ")) ==
              expected);
        CHECK(fmt::format("{}", fmt::join(names_of(file->frames_for_index(vaddr, strings, true)),
                                          " in ")) == expected);
    }
}

} // namespace

// GCC leaves sibling lexical blocks whose ranges overlap: the first one holding an
// address must not hide a later one that holds an inlined call there.
TEST_CASE("heapkit::ElfModule::frames_at finds inlined calls under overlapping blocks") {
    std::string path = built_file("liboverlapping_scopes.so");
    ElfFacts facts(path);
    uint64_t host = facts.address_of("overlap_host");
    std::vector<uint64_t> vaddrs;
    for (uint64_t offset = 0; offset < 0x25; ++offset) {
        vaddrs.push_back(host + offset);
    }
    check_chains_like_llvm(path, vaddrs);
    check_index_agrees(path, 1000);
}

// Where the fixture's DWARF came from: CPython's LTO build (python3.11-dbg's debug file),
// at the addresses where the inlined _PyAST_Constant and _PyAST_Pass were lost, and in
// _tmp_116_rule, whose code _tmp_245_rule shares (the symbol table names either).
TEST_CASE("heapkit::ElfModule::frames_at finds libpython's inlined AST constructors") {
    const char* path = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
    const char* build_id = "dc7ea6fdad516ee27906e1c1fa87c48af65bc294"; // Debian 12's 3.11.2-6
    DebugSearch search({});
    if (!std::filesystem::exists(path) || open_file(path, search)->build_id() != build_id) {
        MESSAGE("skipped: not Debian 12's libpython3.11 with python3.11-dbg installed");
        return;
    }
    check_chains_like_llvm(path, {0x13e9e6, 0x13e8f9, 0x11d6ce, 0x14f5c0});
}

// A long-running process opens a file once and names frames for many calls, each with
// the pool of its own profile: no call may be handed texts of an earlier call's pool
// (freed by then). A text is in a pool when interning it there returns the same bytes.
TEST_CASE("heapkit::ElfModule::frames_at gives each call texts of its own pool") {
    DebugSearch search({});
    auto file = open_file(built_file("inline_cpp"), search);
    std::string bytes = build_address_index(*file, file->build_id());
    auto index = AddressIndex::open(bytes, "inline_cpp");
    REQUIRE(index);
    std::vector<uint64_t> named;
    for (size_t i = 0; i + 1 < index->range_count(); ++i) {
        if (!index->frames_at(index->range_start(i))->empty()) {
            named.push_back(index->range_start(i));
        }
    }
    REQUIRE(named.size() > 3);
    auto first_pool = std::make_unique<StringPool>();
    FrameStrings first(*first_pool);
    for (uint64_t vaddr : named) {
        CHECK_FALSE(file->frames_at(vaddr, first).empty());
    }
    first_pool.reset();
    StringPool second_pool;
    FrameStrings second(second_pool);
    for (uint64_t vaddr : named) {
        for (const Frame& frame : file->frames_at(vaddr, second)) {
            for (std::string_view text : {frame.name, frame.system_name, frame.file}) {
                CHECK(second_pool.intern(text).data() == text.data());
            }
        }
    }
}
