// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/dwarf/dwarf_frames.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

// The line of `// at:marker` in a fixture source ($HEAPKIT_SOURCE_DIR/fixtures/...).
uint32_t marker_line(const std::string& source, const std::string& marker) {
    const char* directory = std::getenv("HEAPKIT_SOURCE_DIR");
    REQUIRE(directory != nullptr);
    std::ifstream in(std::string(directory) + "/fixtures/" + source);
    std::string text;
    for (uint32_t line = 1; std::getline(in, text); ++line) {
        if (text.ends_with("// at:" + marker)) {
            return line;
        }
    }
    FAIL("no marker ", marker, " in ", source);
    return 0;
}

// The inline chain at every byte of the function whose symbol is `symbol`.
std::vector<std::vector<Frame>> chains_in(DwarfFrames& frames, const ElfFacts& facts,
                                          const char* symbol, FrameStrings& strings) {
    auto function = facts.symbol(symbol);
    REQUIRE_MESSAGE(function, "no symbol ", symbol);
    REQUIRE(function->st_size > 0);
    std::vector<std::vector<Frame>> chains;
    for (uint64_t vaddr = function->st_value; vaddr < function->st_value + function->st_size;
         ++vaddr) {
        chains.push_back(frames.at(vaddr, strings));
    }
    return chains;
}

std::vector<std::string> names_of(const std::vector<Frame>& chain) {
    std::vector<std::string> names;
    for (const Frame& frame : chain) {
        names.emplace_back(frame.name);
    }
    return names;
}

} // namespace

TEST_CASE("heapkit::DwarfFrames gives inline chains with the call site's line at each level") {
    BuiltElf elf("inline_cpp");
    DwarfFrames frames(elf.file.module());
    StringPool pool;
    FrameStrings strings(pool);

    const std::vector<std::string> expected = {"geometry::Grid<double>::raw_cells(unsigned long)",
                                               "geometry::Grid<double>::allocate(unsigned long)",
                                               "geometry::build_grids()"};
    size_t found = 0;
    for (const auto& chain : chains_in(frames, elf.facts, "_ZN8geometry11build_gridsEv", strings)) {
        REQUIRE_FALSE(chain.empty()); // every byte of the function has DWARF
        CHECK(chain.back().name == "geometry::build_grids()");
        CHECK(chain.back().system_name == "_ZN8geometry11build_gridsEv");
        if (names_of(chain) != expected) {
            continue;
        }
        ++found;
        CHECK(chain[0].file.ends_with("inline_cpp.cpp"));
        CHECK(chain[1].line == marker_line("inline_cpp.cpp", "allocate"));
        CHECK(chain[2].line == marker_line("inline_cpp.cpp", "build_grids"));
        CHECK(chain[2].start_line > 0);
    }
    CHECK(found > 0);
    CHECK(frames.at(0, strings).empty());
}

TEST_CASE("heapkit::DwarfFrames qualifies functions without a linkage name by their scopes") {
    BuiltElf elf("scopes_cpp");
    DwarfFrames frames(elf.file.module());
    StringPool pool;
    FrameStrings strings(pool);

    std::set<std::string> inlined;
    for (const auto& chain : chains_in(frames, elf.facts, "_ZN5store4fillEv", strings)) {
        for (size_t i = 0; i + 1 < chain.size(); ++i) {
            inlined.emplace(chain[i].name);
        }
    }
    const std::string anonymous = "store::(anonymous namespace)::";
    for (const std::string& name :
         {anonymous + "LRUCache::LRUCache", anonymous + "LRUCache::Insert",
          anonymous + "LRUCache::Shard::take", anonymous + "Pool<int>::grab",
          anonymous + "make_many<long>", anonymous + "Pool<long>::grab",
          std::string("store::keep_static")}) {
        CHECK_MESSAGE(inlined.count(name) == 1, name);
    }
    for (const std::string& name : inlined) {
        CHECK_MESSAGE(name.starts_with("store::"), name); // nothing bare
    }
}

TEST_CASE("heapkit::DwarfFrames gives nothing where no function's DWARF holds the address") {
    BuiltElf elf("liblabels_fixture.so");
    DwarfFrames frames(elf.file.module());
    StringPool pool;
    FrameStrings strings(pool);

    std::vector<Frame> keep = frames.at(elf.facts.address_of("labels_keep") + 1, strings);
    REQUIRE(keep.size() == 1);
    CHECK(keep[0].name == "labels_keep");
    CHECK(keep[0].file.ends_with("labels.c"));
#if defined(__x86_64__)
    // Top-level assembly: code without a DW_TAG_subprogram.
    CHECK(frames.at(elf.facts.address_of("label_alloc") + 1, strings).empty());
#endif
}
