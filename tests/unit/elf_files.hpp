// SPDX-License-Identifier: MIT
// The ELF files the suite builds (tests/meson.build), opened for the symbolizer's unit
// tests, and ground truth read from them with libelf alone.
#pragma once

#include <cstdlib>
#include <doctest/doctest.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <filesystem>
#include <gelf.h>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

// `name` in the build's tests directory ($HEAPKIT_FIXTURE_DIR, set by meson).
inline std::string built_file(std::string_view name) {
    const char* directory = std::getenv("HEAPKIT_FIXTURE_DIR");
    REQUIRE_MESSAGE(directory != nullptr, "HEAPKIT_FIXTURE_DIR is not set (run through meson)");
    std::string path = std::string(directory) + "/" + std::string(name);
    REQUIRE_MESSAGE(std::filesystem::exists(path), path, " was not built");
    return path;
}

// One ELF file reported to libdwfl at bias 0, as ElfModule opens it: libdwfl addresses
// are the file's ELF vaddrs.
class DwflFile {
public:
    explicit DwflFile(const std::string& path) {
        m_callbacks.find_elf = dwfl_build_id_find_elf;
        m_callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
        m_callbacks.section_address = dwfl_offline_section_address;
        m_callbacks.debuginfo_path = &m_debuginfo_path;
        m_dwfl.reset(dwfl_begin(&m_callbacks));
        REQUIRE(m_dwfl);
        dwfl_report_begin(m_dwfl.get());
        m_module = dwfl_report_elf(m_dwfl.get(), path.c_str(), path.c_str(), -1, 0, true);
        REQUIRE_MESSAGE(m_module != nullptr, path, ": ", dwfl_errmsg(-1));
        dwfl_report_end(m_dwfl.get(), nullptr, nullptr);
    }
    DwflFile(const DwflFile&) = delete;
    DwflFile& operator=(const DwflFile&) = delete;

    Dwfl_Module* module() const { return m_module; } // borrowed from the session

private:
    struct DwflDeleter {
        void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
    };
    char* m_debuginfo_path = nullptr; // libdwfl's default search
    Dwfl_Callbacks m_callbacks{};
    std::unique_ptr<Dwfl, DwflDeleter> m_dwfl;
    Dwfl_Module* m_module = nullptr;
};

// What libelf alone says about a file.
class ElfFacts {
public:
    explicit ElfFacts(const std::string& path)
        : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        REQUIRE_MESSAGE(m_fd >= 0, "cannot open ", path);
        elf_version(EV_CURRENT);
        m_elf = elf_begin(m_fd, ELF_C_READ, nullptr);
        REQUIRE(m_elf != nullptr);
    }
    ~ElfFacts() {
        elf_end(m_elf);
        ::close(m_fd);
    }
    ElfFacts(const ElfFacts&) = delete;
    ElfFacts& operator=(const ElfFacts&) = delete;

    // st_value and st_size of the first symbol named `name` (.symtab, else .dynsym).
    std::optional<GElf_Sym> symbol(std::string_view name) const {
        for (Elf64_Word type : {SHT_SYMTAB, SHT_DYNSYM}) {
            for (Elf_Scn* section = nullptr; (section = elf_nextscn(m_elf, section)) != nullptr;) {
                GElf_Shdr header;
                if (gelf_getshdr(section, &header) == nullptr || header.sh_type != type) {
                    continue;
                }
                Elf_Data* data = elf_getdata(section, nullptr);
                for (size_t i = 0; data != nullptr && i < header.sh_size / header.sh_entsize; ++i) {
                    GElf_Sym symbol;
                    if (gelf_getsym(data, static_cast<int>(i), &symbol) != nullptr &&
                        name == elf_strptr(m_elf, header.sh_link, symbol.st_name)) {
                        return symbol;
                    }
                }
            }
        }
        return std::nullopt;
    }

    // The functions .symtab defines with a size (STT_FUNC), in table order.
    std::vector<GElf_Sym> sized_functions() const {
        std::vector<GElf_Sym> functions;
        for (Elf_Scn* section = nullptr; (section = elf_nextscn(m_elf, section)) != nullptr;) {
            GElf_Shdr header;
            if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_SYMTAB) {
                continue;
            }
            Elf_Data* data = elf_getdata(section, nullptr);
            for (size_t i = 0; data != nullptr && i < header.sh_size / header.sh_entsize; ++i) {
                GElf_Sym symbol;
                if (gelf_getsym(data, static_cast<int>(i), &symbol) != nullptr &&
                    GELF_ST_TYPE(symbol.st_info) == STT_FUNC && symbol.st_shndx != SHN_UNDEF &&
                    symbol.st_size > 0) {
                    functions.push_back(symbol);
                }
            }
        }
        return functions;
    }

    // The address of `name`, which must exist.
    uint64_t address_of(std::string_view name) const {
        auto found = symbol(name);
        REQUIRE_MESSAGE(found, "no symbol ", name);
        return found->st_value;
    }

    // The section header of the section named `name`, which must exist.
    GElf_Shdr section(std::string_view name) const {
        size_t names = 0;
        REQUIRE(elf_getshdrstrndx(m_elf, &names) == 0);
        for (Elf_Scn* section = nullptr; (section = elf_nextscn(m_elf, section)) != nullptr;) {
            GElf_Shdr header;
            if (gelf_getshdr(section, &header) != nullptr &&
                name == elf_strptr(m_elf, names, header.sh_name)) {
                return header;
            }
        }
        FAIL("no section ", name);
        return {};
    }

    // The executable PT_LOAD program header, which must exist.
    GElf_Phdr code_segment() const {
        size_t count = 0;
        REQUIRE(elf_getphdrnum(m_elf, &count) == 0);
        for (size_t i = 0; i < count; ++i) {
            GElf_Phdr header;
            if (gelf_getphdr(m_elf, static_cast<int>(i), &header) != nullptr &&
                header.p_type == PT_LOAD && (header.p_flags & PF_X) != 0) {
                return header;
            }
        }
        FAIL("no executable PT_LOAD");
        return {};
    }

    // The NT_GNU_BUILD_ID note in lower-case hex, or empty.
    std::string build_id() const {
        for (Elf_Scn* section = nullptr; (section = elf_nextscn(m_elf, section)) != nullptr;) {
            GElf_Shdr header;
            Elf_Data* data = nullptr;
            if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_NOTE ||
                (data = elf_getdata(section, nullptr)) == nullptr) {
                continue;
            }
            GElf_Nhdr note;
            size_t name_at = 0;
            size_t desc_at = 0;
            for (size_t at = 0; (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
                if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
                    std::string_view(static_cast<const char*>(data->d_buf) + name_at, 3) == "GNU") {
                    std::string hex;
                    auto* bytes = static_cast<const unsigned char*>(data->d_buf) + desc_at;
                    for (size_t i = 0; i < note.n_descsz; ++i) {
                        hex += "0123456789abcdef"[bytes[i] >> 4];
                        hex += "0123456789abcdef"[bytes[i] & 15];
                    }
                    return hex;
                }
            }
        }
        return {};
    }

    Elf* elf() const { return m_elf; } // owned

private:
    int m_fd;
    Elf* m_elf = nullptr;
};

// A file the suite built, opened both ways: its ELF facts, and a libdwfl module of it.
struct BuiltElf {
    explicit BuiltElf(std::string_view name)
        : path(built_file(name))
        , facts(path)
        , file(path) {}

    std::string path;
    ElfFacts facts;
    DwflFile file;
};
