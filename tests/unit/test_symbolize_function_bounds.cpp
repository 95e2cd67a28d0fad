// SPDX-License-Identifier: MIT
// FunctionBounds through .eh_frame_hdr's search table against the full read of every FDE
// (the way it read them before the table), on files the suite builds and on the
// system's libc and libstdc++: the same answer at every byte of their code and around
// it. Then the table damaged in ways a hostile or broken file may be: never a read
// outside the file, and the full read's answers wherever the damage can be seen.
#include "elf_files.hpp"
#include "heapkit/symbolize/elf/function_bounds.hpp"

#include <cstdio>
#include <cstring>
#include <dwarf.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>

using namespace heapkit;

namespace {

using Method = FunctionBounds::Method;

// A file's bytes in memory, patched at will, opened by libelf in place.
class Image {
public:
    explicit Image(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        REQUIRE_MESSAGE(in, "cannot read ", path);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        REQUIRE(bytes.size() > sizeof(Elf64_Ehdr));
    }
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
    ~Image() { elf_end(m_elf); }

    // libelf's view of the bytes as they are now.
    Elf* elf() {
        elf_end(m_elf);
        elf_version(EV_CURRENT);
        m_elf = elf_memory(bytes.data(), bytes.size());
        REQUIRE(m_elf != nullptr);
        return m_elf;
    }

    // The program header of type `type` and its index, which must exist.
    std::pair<GElf_Phdr, size_t> segment(Elf64_Word type) {
        Elf* file = elf();
        size_t count = 0;
        REQUIRE(elf_getphdrnum(file, &count) == 0);
        for (size_t i = 0; i < count; ++i) {
            GElf_Phdr header;
            if (gelf_getphdr(file, static_cast<int>(i), &header) != nullptr &&
                header.p_type == type && (type != PT_LOAD || (header.p_flags & PF_X) != 0)) {
                return {header, i};
            }
        }
        FAIL("no segment of type ", type);
        return {};
    }

    uint8_t* at(uint64_t offset) {
        REQUIRE(offset < bytes.size());
        return reinterpret_cast<uint8_t*>(bytes.data()) + offset;
    }

    std::vector<char> bytes;

private:
    Elf* m_elf = nullptr;
};

struct Comparison {
    size_t addresses = 0;
    size_t differences = 0;
    std::set<uint64_t> starts; // the function starts found
    std::string first_difference;
};

void compare(const FunctionBounds& table, const FunctionBounds& full, uint64_t vaddr,
             Comparison& comparison) {
    ++comparison.addresses;
    auto got = table.start_of(vaddr);
    auto wanted = full.start_of(vaddr);
    if (wanted) {
        comparison.starts.insert(*wanted);
    }
    if (got != wanted && comparison.differences++ == 0) {
        auto hex = [](uint64_t value) {
            char text[24];
            std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
            return std::string(text);
        };
        auto text = [&hex](std::optional<uint64_t> start) {
            return start ? hex(*start) : std::string("none");
        };
        comparison.first_difference =
            "at " + hex(vaddr) + ": table " + text(got) + ", full read " + text(wanted);
    }
}

// Every byte of the code segment and a page either side, and the ends of the address
// space: function starts, insides, ends, gaps between functions, and no function.
Comparison compare_code(const FunctionBounds& table, const FunctionBounds& full,
                        const GElf_Phdr& code) {
    Comparison comparison;
    uint64_t first = code.p_vaddr > 4096 ? code.p_vaddr - 4096 : 0;
    for (uint64_t vaddr = first; vaddr < code.p_vaddr + code.p_memsz + 4096; ++vaddr) {
        compare(table, full, vaddr, comparison);
    }
    for (uint64_t vaddr : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, ~uint64_t{0} - 1}) {
        compare(table, full, vaddr, comparison);
    }
    return comparison;
}

void check_same_answers(const std::string& path, size_t at_least_functions) {
    INFO(path);
    Image image(path);
    const GElf_Phdr code = image.segment(PT_LOAD).first;
    Elf* elf = image.elf();
    FunctionBounds table(elf);
    FunctionBounds full(elf, Method::every_fde);
    REQUIRE(table.uses_search_table());
    REQUIRE_FALSE(full.uses_search_table());
    Comparison comparison = compare_code(table, full, code);
    CHECK_MESSAGE(comparison.differences == 0, comparison.differences, " of ", comparison.addresses,
                  " addresses differ, first ", comparison.first_difference);
    CHECK(comparison.starts.size() >= at_least_functions);
    CHECK(table.uses_search_table()); // every answer came from the table: no fallback
}

} // namespace

TEST_CASE("heapkit::FunctionBounds answers from .eh_frame_hdr as the full read of the FDEs") {
    check_same_answers(built_file("inline_cpp"), 5);
    check_same_answers(built_file("alloc_c_nopie"), 5);
    check_same_answers(built_file("alloc_cpp"), 5);
    check_same_answers(built_file("libshared_fixture.so"), 3);
    check_same_answers(built_file("liblabels_fixture.stripped.so"), 3);
    for (const char* system :
         {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
        if (std::filesystem::exists(system)) {
            check_same_answers(system, 1000);
        }
    }
}

TEST_CASE("heapkit::FunctionBounds reads a damaged .eh_frame_hdr safely, the full way") {
    const std::string path = built_file("inline_cpp");
    Image pristine(path);
    const GElf_Phdr code = pristine.segment(PT_LOAD).first;
    const auto eh_frame_hdr = pristine.segment(PT_GNU_EH_FRAME);
    const GElf_Phdr hdr = eh_frame_hdr.first;
    const size_t hdr_index = eh_frame_hdr.second;
    REQUIRE(hdr.p_filesz >= 12 + 8);
    uint8_t* table_encoding = pristine.at(hdr.p_offset + 3);
    REQUIRE(*table_encoding == (DW_EH_PE_datarel | DW_EH_PE_sdata4)); // what GNU ld writes
    FunctionBounds full(pristine.elf(), Method::every_fde);

    struct Damage {
        const char* what;
        std::function<void(Image&)> patch;
        bool table_refused; // at once, else at the first lookup that meets the damage
    };
    auto entry = [&hdr](size_t index, size_t field) {
        return hdr.p_offset + 12 + (index * 2 + field) * 4;
    };
    auto put32 = [](uint8_t* p, uint32_t value) { std::memcpy(p, &value, 4); };
    auto get32 = [](const uint8_t* p) {
        uint32_t value;
        std::memcpy(&value, p, 4);
        return value;
    };
    std::vector<Damage> damages = {
        {"version 2", [&](Image& i) { *i.at(hdr.p_offset) = 2; }, true},
        {"no table", [&](Image& i) { *i.at(hdr.p_offset + 3) = DW_EH_PE_omit; }, true},
        {"a variable-size table", [&](Image& i) { *i.at(hdr.p_offset + 3) = 0x31; }, true},
        {"an indirect table", [&](Image& i) { *i.at(hdr.p_offset + 3) = 0xbb; }, true},
        {"more entries than bytes", [&](Image& i) { put32(i.at(hdr.p_offset + 8), 0x7fffffff); },
         true},
        {"eh_frame_ptr elsewhere",
         [&](Image& i) { put32(i.at(hdr.p_offset + 4), get32(i.at(hdr.p_offset + 4)) + 4); }, true},
        {"entries out of order",
         [&](Image& i) {
             uint32_t first = get32(i.at(entry(0, 0)));
             put32(i.at(entry(0, 0)), get32(i.at(entry(1, 0))) + 8); // each datarel
             put32(i.at(entry(1, 0)), first);
         },
         true},
        // In order as numbers, but the header's address plus the first wraps around the
        // address space: the first start is the highest.
        {"a first start below address 0", [&](Image& i) { put32(i.at(entry(0, 0)), 0x80000000); },
         true},
        {"a segment cut short",
         [&](Image& i) {
             Elf64_Ehdr ehdr;
             std::memcpy(&ehdr, i.bytes.data(), sizeof ehdr);
             uint64_t filesz = 14; // the header and two fields: room for no entry
             std::memcpy(
                 i.at(ehdr.e_phoff + hdr_index * ehdr.e_phentsize + offsetof(Elf64_Phdr, p_filesz)),
                 &filesz, sizeof filesz);
         },
         true},
        {"an FDE pointer into the middle of an FDE",
         [&](Image& i) { put32(i.at(entry(2, 1)), get32(i.at(entry(2, 1))) + 4); }, false},
        {"an FDE pointer at the CIE",
         [&](Image& i) { put32(i.at(entry(2, 1)), get32(i.at(hdr.p_offset + 4)) + 4); }, false},
        {"an FDE pointer past .eh_frame", [&](Image& i) { put32(i.at(entry(2, 1)), 0x7ffffff0); },
         false},
        {"a start that is not its FDE's",
         [&](Image& i) { put32(i.at(entry(2, 0)), get32(i.at(entry(2, 0))) - 1); }, false},
    };
    for (const Damage& damage : damages) {
        INFO(damage.what);
        Image image(path);
        damage.patch(image);
        FunctionBounds table(image.elf());
        CHECK(table.uses_search_table() == !damage.table_refused);
        Comparison comparison = compare_code(table, full, code);
        CHECK_MESSAGE(comparison.differences == 0, comparison.first_difference);
        CHECK_FALSE(table.uses_search_table()); // the damage was seen
    }

    // Random bytes over the header and the table, then over .eh_frame: whatever is
    // read, it is read inside the file (the sanitizer builds check) and nothing hangs.
    std::mt19937 random(37);
    GElf_Shdr eh_frame = ElfFacts(path).section(".eh_frame");
    for (int round = 0; round < 300; ++round) {
        Image image(path);
        bool in_table = round % 2 == 0;
        uint64_t offset = in_table ? hdr.p_offset : eh_frame.sh_offset;
        uint64_t size = in_table ? hdr.p_filesz : eh_frame.sh_size;
        for (int i = 0; i < 1 + round % 8; ++i) {
            *image.at(offset + random() % size) = static_cast<uint8_t>(random());
        }
        FunctionBounds table(image.elf());
        for (uint64_t vaddr = code.p_vaddr; vaddr < code.p_vaddr + code.p_memsz; vaddr += 7) {
            (void)table.start_of(vaddr);
        }
    }
}
