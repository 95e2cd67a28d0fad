// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/elf/symbol_index.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit;

namespace {

// name_at() as a string, "" for none.
std::string name_at(const SymbolIndex& index, uint64_t vaddr) {
    const char* name = index.name_at(vaddr);
    return name == nullptr ? "" : name;
}

} // namespace

TEST_CASE("heapkit::SymbolIndex honours symbol sizes and prefers the strongest binding") {
    BuiltElf elf("liblabels_fixture.so");
    SymbolIndex index(elf.file.module());

    auto keep = elf.facts.symbol("labels_keep");
    REQUIRE(keep);
    REQUIRE(keep->st_size > 1);
    // labels_keep_weak is a weak alias at the same address: the global name wins.
    REQUIRE(elf.facts.address_of("labels_keep_weak") == keep->st_value);
    CHECK(name_at(index, keep->st_value) == "labels_keep");
    CHECK(name_at(index, keep->st_value + keep->st_size - 1) == "labels_keep");
    // A static function (a local symbol) is named from .symtab.
    CHECK(name_at(index, elf.facts.address_of("labels_at_load")) == "labels_at_load");
    CHECK(name_at(index, 0) == "");
}

#if defined(__x86_64__)
TEST_CASE("heapkit::SymbolIndex names code under a sizeless label up to the next symbol") {
    for (const char* name : {"liblabels_fixture.so", "liblabels_fixture.stripped.so"}) {
        CAPTURE(name);
        BuiltElf elf(name);
        SymbolIndex index(elf.file.module());

        uint64_t label = elf.facts.address_of("label_alloc");
        uint64_t after = elf.facts.address_of("after_label");
        REQUIRE(elf.facts.symbol("label_alloc")->st_size == 0);
        REQUIRE(after > label + 1);
        CHECK(name_at(index, label) == "label_alloc");
        CHECK(name_at(index, label + 1) == "label_alloc");
        CHECK(name_at(index, after - 1) == "label_alloc");
        // The next symbol ends the label's reach, and a sized symbol its own.
        CHECK(name_at(index, after) == "after_label");
        CHECK(name_at(index, after + 1) == "");
        CHECK(name_at(index, after + 3) == "");

        // A sized symbol holding the address wins over a label inside it.
        uint64_t inner = elf.facts.address_of("inner_label");
        REQUIRE(inner == elf.facts.address_of("outer_sized") + 1);
        CHECK(name_at(index, inner) == "outer_sized");
        CHECK(name_at(index, inner + 1) == "outer_sized");
    }
}

TEST_CASE("heapkit::SymbolIndex stops a label at the end of its section") {
    BuiltElf elf("liblabels_fixture.so");
    SymbolIndex index(elf.file.module());

    GElf_Shdr tail = elf.facts.section("label_tail");
    REQUIRE(elf.facts.address_of("tail_label") == tail.sh_addr);
    REQUIRE(tail.sh_size == 2);
    CHECK(name_at(index, tail.sh_addr + 1) == "tail_label");
    CHECK(name_at(index, tail.sh_addr + 2) != "tail_label");
    CHECK(name_at(index, tail.sh_addr + 64) != "tail_label");
}
#endif
