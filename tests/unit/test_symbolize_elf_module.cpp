// SPDX-License-Identifier: MIT
#include "elf_files.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/elf/symbol_lookup.hpp"

#include <cerrno>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <sys/resource.h>

using namespace heapkit;

namespace {

// The paths this process has open or maps (/proc/self/fd, /proc/self/maps).
std::set<std::string> held_paths() {
    std::set<std::string> held;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        auto target = std::filesystem::read_symlink(entry.path(), error);
        if (!error) {
            held.insert(target.string());
        }
    }
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        if (auto slash = line.find('/'); slash != std::string::npos) {
            held.insert(line.substr(slash));
        }
    }
    return held;
}

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

TEST_CASE("heapkit::ElfModule reads the build id, machine and what names code") {
    DebugSearch search({});
    ElfFacts facts(built_file("twin_o1"));
    auto twin = open_built("twin_o1", search);
    CHECK(twin->build_id().size() == 40);
    CHECK(twin->build_id() == facts.build_id());
    CHECK(twin->build_id() != open_built("twin_o2", search)->build_id());
    GElf_Ehdr header;
    REQUIRE(gelf_getehdr(facts.elf(), &header) != nullptr);
    CHECK(twin->machine() == header.e_machine);
    CHECK_FALSE(twin->is_jemalloc());
    CHECK(twin->has_dwarf());
    CHECK(twin->has_symtab());

    auto stripped = open_built("liblabels_fixture.stripped.so", search);
    CHECK(stripped->build_id() == ElfFacts(built_file("liblabels_fixture.so")).build_id());
    CHECK_FALSE(stripped->has_dwarf());
    CHECK_FALSE(stripped->has_symtab());
}

TEST_CASE("heapkit::ElfModule knows jemalloc by its mallctl") {
    const char* jemalloc = std::getenv("HEAPKIT_JEMALLOC_SO");
    REQUIRE(jemalloc != nullptr);
    DebugSearch search({});
    auto opened = ElfModule::open(jemalloc, search);
    REQUIRE(opened);
    CHECK((*opened)->is_jemalloc());
}

namespace {

// Every name in `path`'s .symtab and .dynsym (defined or not), each with whether some
// table defines it, read by a scan with libelf alone; and whether .dynsym has a GNU hash.
struct SymbolNames {
    std::map<std::string, bool> defined;
    bool gnu_hash = false;
};
SymbolNames symbol_names(const std::string& path) {
    ElfFacts facts(path);
    SymbolNames names;
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(facts.elf(), section)) != nullptr;) {
        GElf_Shdr header;
        REQUIRE(gelf_getshdr(section, &header) != nullptr);
        names.gnu_hash = names.gnu_hash || header.sh_type == SHT_GNU_HASH;
        if (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM) {
            continue;
        }
        Elf_Data* data = elf_getdata(section, nullptr);
        for (size_t i = 0; data != nullptr && i < header.sh_size / header.sh_entsize; ++i) {
            GElf_Sym symbol;
            REQUIRE(gelf_getsym(data, static_cast<int>(i), &symbol) != nullptr);
            const char* name = elf_strptr(facts.elf(), header.sh_link, symbol.st_name);
            REQUIRE(name != nullptr);
            names.defined[name] = names.defined[name] || symbol.st_shndx != SHN_UNDEF;
        }
    }
    return names;
}

} // namespace

// The GNU hash lookup finds what a scan of every symbol finds, in libraries without
// .symtab (the lookup alone answers) and with it: every name, defined, imported, or
// neither.
TEST_CASE("heapkit::defines_symbol answers as a scan of every symbol does") {
    const char* jemalloc = std::getenv("HEAPKIT_JEMALLOC_SO");
    REQUIRE(jemalloc != nullptr);
    for (const std::string& path : {std::string(jemalloc), built_file("liblabels_fixture.so"),
                                    built_file("liblabels_fixture.stripped.so")}) {
        CAPTURE(path);
        SymbolNames names = symbol_names(path);
        CHECK(names.gnu_hash);
        CHECK(names.defined.size() > 10);
        names.defined.try_emplace("", false);
        names.defined.try_emplace("mallctl_nowhere", false);
        names.defined.try_emplace("m", false);
        ElfFacts facts(path);
        for (const auto& [name, defined] : names.defined) {
            CAPTURE(name);
            CHECK(defines_symbol(facts.elf(), name) == defined);
        }
    }
}

TEST_CASE("heapkit::ElfModule maps file offsets in its code to vaddrs") {
    DebugSearch search({});
    ElfFacts facts(built_file("twin_o1"));
    auto twin = open_built("twin_o1", search);
    GElf_Phdr code = facts.code_segment();
    CHECK(twin->vaddr_of_file_offset(code.p_offset + 5) == code.p_vaddr + 5);
    CHECK(twin->vaddr_of_file_offset(code.p_offset + code.p_filesz - 1) ==
          code.p_vaddr + code.p_filesz - 1);
    CHECK_FALSE(twin->vaddr_of_file_offset(code.p_offset + code.p_filesz + 4096));
    if (code.p_offset >= 4096) { // the page before the code belongs to another segment
        CHECK_FALSE(twin->vaddr_of_file_offset(0));
    }
}

TEST_CASE("heapkit::ElfModule names frames from DWARF, else the symbol tables") {
    DebugSearch search({});
    StringPool pool;
    FrameStrings strings(pool);
    ElfFacts facts(built_file("twin_o1"));
    auto twin = open_built("twin_o1", search);
    std::vector<Frame> frames = twin->frames_at(facts.address_of("twin_work") + 1, strings);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].name == "twin_work");
    CHECK(frames[0].file.ends_with("twin.c"));
    CHECK(frames[0].line > 0);

    // Stripped of .symtab and DWARF: exports still have names, from .dynsym; a static
    // function has none.
    ElfFacts unstripped(built_file("liblabels_fixture.so"));
    auto stripped = open_built("liblabels_fixture.stripped.so", search);
    frames = stripped->frames_at(unstripped.address_of("labels_keep") + 1, strings);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].name == "labels_keep");
    CHECK(frames[0].file.empty());
    CHECK(stripped->frames_at(unstripped.address_of("labels_at_load") + 1, strings).empty());
}

TEST_CASE("heapkit::ElfModule::close_file lets go of the file and opens it again when asked") {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("heapkit-close-file-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = (dir / "twin").string();
    std::filesystem::copy_file(built_file("twin_o1"), path,
                               std::filesystem::copy_options::overwrite_existing);
    DebugSearch search({});
    StringPool pool;
    FrameStrings strings(pool);
    uint64_t work = 0;
    GElf_Phdr code{};
    {
        ElfFacts facts(path); // its descriptor closed before what follows looks
        work = facts.address_of("twin_work") + 1;
        code = facts.code_segment();
    }
    auto opened = ElfModule::open(path, search);
    REQUIRE(opened);
    const ElfModule& twin = **opened;
    std::string build_id = twin.build_id();
    CHECK(held_paths().contains(path)); // libdwfl's descriptor and libelf's mapping

    twin.close_file();
    CHECK_FALSE(held_paths().contains(path));
    CHECK(twin.build_id() == build_id); // read once, kept
    CHECK(twin.vaddr_of_file_offset(code.p_offset) == code.p_vaddr);
    CHECK_FALSE(twin.dwarf_read());
    // A name wanted: the file is opened again.
    std::vector<Frame> frames = twin.frames_at(work, strings);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].name == "twin_work");
    CHECK(twin.dwarf_read());
    CHECK(held_paths().contains(path));

    // Out of descriptors when it is wanted again: no names, and the reason kept (the
    // process's, not the file's), until the next close_file().
    twin.close_file();
    CHECK(twin.reopen_error() == 0);
    {
        rlimit saved{};
        REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
        rlimit none = saved;
        none.rlim_cur = 0; // every open fails with EMFILE
        REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
        bool named = !twin.frames_at(work, strings).empty();
        ::setrlimit(RLIMIT_NOFILE, &saved);
        CHECK_FALSE(named);
    }
    CHECK(twin.reopen_error() == EMFILE);
    twin.close_file();
    CHECK(twin.reopen_error() == 0);
    CHECK(twin.frames_at(work, strings).size() == 1);

    // Another build at the path meanwhile: nothing is named from it.
    twin.close_file();
    std::filesystem::remove(path);
    std::filesystem::copy_file(built_file("twin_extra"), path);
    CHECK(twin.frames_at(work, strings).empty());
    CHECK_FALSE(held_paths().contains(path));
    std::filesystem::remove_all(dir);
}

TEST_CASE("heapkit::ElfModule::open says which file it cannot open") {
    DebugSearch search({});
    auto missing = ElfModule::open("/nonexistent/heapkit/lib.so", search);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("/nonexistent/heapkit/lib.so") != std::string::npos);
    const char* source = std::getenv("HEAPKIT_SOURCE_DIR");
    REQUIRE(source != nullptr);
    std::string text_file = std::string(source) + "/fixtures/twin.c";
    auto not_elf = ElfModule::open(text_file, search);
    REQUIRE_FALSE(not_elf);
    CHECK(not_elf.error().message.find(text_file) != std::string::npos);
}

TEST_CASE("heapkit::ElfModule::function_start finds each function's start in a stripped copy") {
    DebugSearch search({});
    // The library's functions as its .symtab knows them; the stripped copy has no .symtab
    // and no DWARF, only .eh_frame.
    ElfFacts facts(built_file("liblabels_fixture.so"));
    auto stripped = open_built("liblabels_fixture.stripped.so", search);
    CHECK_FALSE(stripped->has_symtab());
    CHECK(stripped->has_dynsym());
    std::vector<GElf_Sym> functions = facts.sized_functions();
    REQUIRE(functions.size() >= 3);
    size_t placed = 0;
    for (const GElf_Sym& function : functions) {
        uint64_t last = function.st_value + function.st_size - 1;
        for (uint64_t vaddr : {function.st_value, function.st_value + function.st_size / 2, last}) {
            auto start = stripped->function_start(vaddr);
            if (start) {
                CHECK_MESSAGE(*start == function.st_value, "at 0x", std::hex, vaddr);
                ++placed;
            }
        }
    }
    // What the compiler wrote has an FDE (the assembly without .cfi_startproc has none,
    // and gets no start rather than a wrong one).
    CHECK(placed >= 3);
    uint64_t keep = facts.address_of("labels_keep");
    CHECK(stripped->function_start(keep + 1) == keep);
    CHECK_FALSE(stripped->function_start(facts.address_of("outer_sized") + 1));
    CHECK_FALSE(stripped->function_start(0));
}
