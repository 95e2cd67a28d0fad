// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/elf/inflated_debug_file.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <gelf.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

using namespace heapkit;

namespace {

constexpr const char* libc_debug =
    "/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug";

struct Section {
    GElf_Shdr header;
    std::string bytes; // inflated by libelf (zlib) where the file compressed it
};

// Every named section of the ELF file at `fd`, inflated by libelf itself: the truth the
// copy is held to.
std::map<std::string, Section> sections_of(int fd) {
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, nullptr);
    REQUIRE(elf != nullptr);
    size_t names = 0;
    REQUIRE(elf_getshdrstrndx(elf, &names) == 0);
    std::map<std::string, Section> sections;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
        GElf_Shdr header;
        REQUIRE(gelf_getshdr(scn, &header) != nullptr);
        if ((header.sh_flags & SHF_COMPRESSED) != 0) {
            REQUIRE(elf_compress(scn, 0, 0) == 1); // libelf's zlib
            REQUIRE(gelf_getshdr(scn, &header) != nullptr);
        }
        Elf_Data* data = header.sh_type == SHT_NOBITS ? nullptr : elf_rawdata(scn, nullptr);
        std::string bytes = data == nullptr || data->d_buf == nullptr
                                ? std::string()
                                : std::string(static_cast<const char*>(data->d_buf), data->d_size);
        sections[elf_strptr(elf, names, header.sh_name)] = {header, std::move(bytes)};
    }
    elf_end(elf);
    return sections;
}

std::vector<unsigned char> libc_build_id() {
    std::vector<unsigned char> id;
    std::string hex = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";
    for (size_t i = 0; i < hex.size(); i += 2) {
        id.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return id;
}

} // namespace

TEST_CASE("heapkit::inflated_debug_file inflates what names need, empties the rest") {
    UniqueFd original(::open(libc_debug, O_RDONLY | O_CLOEXEC));
    if (!original) {
        MESSAGE("skipped: ", libc_debug,
                " is not installed (libc6-dbg of Debian 12's libc 2.36-9+deb12u14;"
                " tests/install-packages.sh installs libc6-dbg)");
        return;
    }
    std::vector<unsigned char> id = libc_build_id();
    UniqueFd copy = inflated_debug_file(original.get(), id);
    REQUIRE(copy);
    auto expected = sections_of(original.get());
    auto got = sections_of(copy.get());
    REQUIRE(got.size() == expected.size());
    size_t inflated = 0;
    for (const auto& [name, section] : expected) {
        INFO(name);
        REQUIRE(got.contains(name));
        const Section& mine = got.at(name);
        CHECK((mine.header.sh_flags & SHF_COMPRESSED) == 0);
        if (name == ".debug_loclists" || name == ".debug_loc" || name == ".debug_macro") {
            CHECK(mine.bytes.empty()); // not read for names
        } else {
            CHECK(mine.header.sh_type == section.header.sh_type);
            CHECK(mine.header.sh_addr == section.header.sh_addr);
            CHECK(mine.bytes == section.bytes);
            inflated += name.starts_with(".debug_") ? 1 : 0;
        }
    }
    CHECK(inflated >= 5); // info, abbrev, line, str, rnglists at least

    // Another build's id: not this file.
    std::vector<unsigned char> other = id;
    other[0] ^= 1;
    CHECK_FALSE(inflated_debug_file(original.get(), other));
}

TEST_CASE("heapkit::inflated_debug_file leaves a file without compressed DWARF alone") {
    UniqueFd plain(::open(built_file("alloc_cpp").c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(plain);
    CHECK_FALSE(inflated_debug_file(plain.get(), libc_build_id()));
    UniqueFd not_elf(::open("/etc/hostname", O_RDONLY | O_CLOEXEC));
    if (not_elf) {
        CHECK_FALSE(inflated_debug_file(not_elf.get(), libc_build_id()));
    }
}
