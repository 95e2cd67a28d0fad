// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf_module.hpp"

#include "elf_files.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit;

namespace {

// The mapping ld.so or the kernel makes of `facts`' code with 4 KiB pages, at `base`
// (the load bias; 0 for a non-PIE executable).
Module code_mapping(const ElfFacts& facts, uint64_t base) {
    GElf_Phdr code = facts.code_segment();
    Module mapping;
    mapping.path = "/srv/app";
    mapping.start = base + (code.p_vaddr & ~uint64_t{4095});
    mapping.limit = base + ((code.p_vaddr + code.p_filesz + 4095) & ~uint64_t{4095});
    mapping.file_offset = code.p_offset & ~uint64_t{4095};
    return mapping;
}

std::unique_ptr<ElfModule> open_built(const std::string& name, const DebugSearch& search) {
    auto opened = ElfModule::open(built_file(name), search);
    REQUIRE_MESSAGE(opened, opened.error().message);
    return std::move(*opened);
}

} // namespace

TEST_CASE("heapkit::ElfModule::fits_mapping wants the code segment mapped exactly") {
    DebugSearch search({});
    ElfFacts facts(built_file("twin_o1"));
    auto twin = open_built("twin_o1", search);
    const uint64_t base = 0x55d0c0de0000;
    Module exact = code_mapping(facts, base);
    CHECK(twin->fits_mapping(exact));
    CHECK(twin->fits_mapping(code_mapping(facts, base + 0x7000))); // any page-aligned bias

    Module longer = exact;
    longer.limit += 4096;
    CHECK_FALSE(twin->fits_mapping(longer));
    Module shorter = exact;
    shorter.limit -= 4096;
    CHECK_FALSE(twin->fits_mapping(shorter));
    Module other_offset = exact;
    other_offset.file_offset += 4096;
    CHECK_FALSE(twin->fits_mapping(other_offset));
    CHECK_FALSE(twin->fits_mapping(code_mapping(facts, base + 0x800))); // not page-aligned

    // The same source with one more function: its code segment starts where the
    // other's does, one page longer.
    auto longer_build = open_built("twin_extra", search);
    CHECK_FALSE(longer_build->fits_mapping(exact));
    CHECK(longer_build->fits_mapping(code_mapping(ElfFacts(built_file("twin_extra")), base)));
}

TEST_CASE("heapkit::ElfModule::fits_mapping wants a non-PIE executable at its own addresses") {
    DebugSearch search({});
    ElfFacts facts(built_file("alloc_c_nopie"));
    auto program = open_built("alloc_c_nopie", search);
    CHECK(program->fits_mapping(code_mapping(facts, 0)));
    CHECK_FALSE(program->fits_mapping(code_mapping(facts, 0x10000)));
}
