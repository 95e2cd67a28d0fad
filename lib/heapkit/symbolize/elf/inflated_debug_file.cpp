// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/inflated_debug_file.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <elfutils/libdwelf.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libdeflate.h>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace heapkit {
namespace {

struct ElfDeleter {
    void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfDeleter>;

struct DecompressorDeleter {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};
using Decompressor = std::unique_ptr<libdeflate_decompressor, DecompressorDeleter>;

// The DWARF sections libdw reads to name code (units, abbreviations, lines, strings,
// ranges, address tables).
bool names_need(std::string_view name) {
    for (std::string_view wanted :
         {".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
          ".debug_str_offsets", ".debug_addr", ".debug_ranges", ".debug_rnglists", ".debug_aranges",
          ".debug_types"}) {
        if (name == wanted) {
            return true;
        }
    }
    return false;
}

std::string_view section_name(Elf* elf, size_t names, const GElf_Shdr& header) {
    const char* name = elf_strptr(elf, names, header.sh_name);
    return name == nullptr ? std::string_view() : std::string_view(name);
}

bool is_compressed_dwarf(std::string_view name, const GElf_Shdr& header) {
    return (header.sh_flags & SHF_COMPRESSED) != 0 && name.starts_with(".debug_");
}

bool has_compressed_dwarf(Elf* elf, size_t names) {
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) != nullptr &&
            is_compressed_dwarf(section_name(elf, names, header), header)) {
            return true;
        }
    }
    return false;
}

// The most one compressed section is believed to inflate to. Deflate cannot pack more
// than 1032 bytes into one (its longest match, 258 bytes, in a code of 2 bits, gives
// 258 * 8 / 2), so a header claiming more lies; and 4 GiB is past the largest
// .debug_info we know of (libxul's, about 2 GiB): a claim beyond it is not a file to read
// names from in memory.
constexpr uint64_t deflate_max_ratio = 1032;
constexpr uint64_t max_inflated_section = uint64_t{4} << 30;

bool believable_size(uint64_t claimed, size_t compressed) {
    return claimed <= max_inflated_section && claimed / deflate_max_ratio <= compressed;
}

// The section's contents inflated into `out`, its header made to say so; false when it
// is not zlib, claims a size deflate cannot reach, or does not inflate to the size its
// header gives.
// `refused` says why a size was not believed.
bool inflate_section(Elf_Scn* scn, int elf_class, libdeflate_decompressor* decompressor,
                     std::vector<char>& out, GElf_Shdr& header, std::string& refused) {
    GElf_Chdr compression;
    Elf_Data* raw = elf_rawdata(scn, nullptr);
    size_t skip = elf_class == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
    if (gelf_getchdr(scn, &compression) == nullptr || compression.ch_type != ELFCOMPRESS_ZLIB ||
        raw == nullptr || raw->d_size < skip) {
        return false;
    }
    if (!believable_size(compression.ch_size, raw->d_size - skip)) {
        refused = fmt::format("a compressed section claims {} bytes inflated from {}, more than "
                              "deflate can give (1032:1) or than 4 GiB",
                              compression.ch_size, raw->d_size - skip);
        return false;
    }
    out.resize(compression.ch_size);
    size_t inflated = 0;
    if (libdeflate_zlib_decompress(decompressor, static_cast<const char*>(raw->d_buf) + skip,
                                   raw->d_size - skip, out.data(), out.size(),
                                   &inflated) != LIBDEFLATE_SUCCESS ||
        inflated != out.size()) {
        return false;
    }
    header.sh_flags &= ~GElf_Xword{SHF_COMPRESSED};
    header.sh_size = compression.ch_size;
    header.sh_addralign = compression.ch_addralign;
    return true;
}

// Copies `from`'s headers and sections into `to`, inflating or emptying the compressed
// DWARF ones. `buffers` holds the inflated bytes until `to` is written.
bool copy_elf(Elf* from, Elf* to, std::deque<std::vector<char>>& buffers, std::string& refused) {
    int elf_class = gelf_getclass(from);
    size_t names = 0;
    size_t segments = 0;
    GElf_Ehdr file_header;
    if (elf_getshdrstrndx(from, &names) != 0 || elf_getphdrnum(from, &segments) != 0 ||
        gelf_getehdr(from, &file_header) == nullptr || gelf_newehdr(to, elf_class) == nullptr ||
        gelf_update_ehdr(to, &file_header) == 0 ||
        (segments > 0 && gelf_newphdr(to, segments) == nullptr)) {
        return false;
    }
    for (size_t i = 0; i < segments; ++i) {
        GElf_Phdr segment;
        if (gelf_getphdr(from, static_cast<int>(i), &segment) == nullptr ||
            gelf_update_phdr(to, static_cast<int>(i), &segment) == 0) {
            return false;
        }
    }
    Decompressor decompressor(libdeflate_alloc_decompressor());
    if (!decompressor) {
        return false;
    }
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(from, scn)) != nullptr;) {
        GElf_Shdr header;
        Elf_Scn* copy = elf_newscn(to);
        Elf_Data* data = copy == nullptr ? nullptr : elf_newdata(copy);
        if (gelf_getshdr(scn, &header) == nullptr || data == nullptr) {
            return false;
        }
        std::string_view name = section_name(from, names, header);
        data->d_type = ELF_T_BYTE;
        data->d_align = 1;
        if (header.sh_type == SHT_NOBITS) {
            data->d_size = header.sh_size;
        } else if (is_compressed_dwarf(name, header) && names_need(name)) {
            std::vector<char>& out = buffers.emplace_back();
            if (!inflate_section(scn, elf_class, decompressor.get(), out, header, refused)) {
                return false;
            }
            data->d_buf = out.data();
            data->d_size = out.size();
        } else if (is_compressed_dwarf(name, header)) {
            header.sh_flags &= ~GElf_Xword{SHF_COMPRESSED}; // not read for names: empty
            header.sh_size = 0;
            data->d_size = 0;
        } else {
            Elf_Data* raw = elf_rawdata(scn, nullptr);
            if (raw == nullptr && header.sh_size != 0) {
                return false;
            }
            data->d_buf = raw == nullptr ? nullptr : raw->d_buf;
            data->d_size = raw == nullptr ? 0 : raw->d_size;
        }
        if (gelf_update_shdr(copy, &header) == 0) {
            return false;
        }
    }
    return true;
}

// True when `elf`'s NT_GNU_BUILD_ID is `wanted`.
bool has_build_id(Elf* elf, std::span<const unsigned char> wanted) {
    const void* id = nullptr;
    ssize_t length = dwelf_elf_gnu_build_id(elf, &id);
    const auto* bytes = static_cast<const unsigned char*>(id);
    return length > 0 && std::equal(wanted.begin(), wanted.end(), bytes, bytes + length);
}

// Whether the copy, laid out by libelf (ELF_C_NULL computes the layout, writes nothing),
// is about what it holds: the original and the inflated sections. Alignments and sizes
// come from the file, and a lying one (an sh_addralign of 2^40) would have libelf write
// that many zeros into the memory file.
bool fits_layout(Elf* to, int fd, const std::deque<std::vector<char>>& buffers) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return false;
    }
    uint64_t held = static_cast<uint64_t>(st.st_size);
    for (const std::vector<char>& buffer : buffers) {
        held += buffer.size();
    }
    off_t size = elf_update(to, ELF_C_NULL);
    return size >= 0 && static_cast<uint64_t>(size) <= 2 * held + (uint64_t{1} << 20);
}

} // namespace

UniqueFd inflated_debug_file(int fd, std::span<const unsigned char> build_id,
                             std::string* refused) {
    elf_version(EV_CURRENT); // libdwfl has done so; a caller without it too
    ElfHandle from(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
    size_t names = 0;
    if (!from || elf_kind(from.get()) != ELF_K_ELF || elf_getshdrstrndx(from.get(), &names) != 0 ||
        !has_build_id(from.get(), build_id) || !has_compressed_dwarf(from.get(), names)) {
        return {};
    }
    UniqueFd out(::memfd_create("heapkit-debug-file", MFD_CLOEXEC));
    if (!out) {
        return {};
    }
    std::deque<std::vector<char>> buffers; // inflated sections, until written
    ElfHandle to(elf_begin(out.get(), ELF_C_WRITE, nullptr));
    std::string why;
    bool copied = false;
    try {
        copied = to && copy_elf(from.get(), to.get(), buffers, why);
    } catch (const std::bad_alloc&) {
        why = "its inflated sections do not fit in memory"; // a believable size, still too much
    }
    if (copied && !fits_layout(to.get(), fd, buffers)) {
        copied = false;
        why = "its section headers lay the file out far beyond its contents";
    }
    if (refused != nullptr) {
        *refused = why;
    }
    if (!copied || elf_update(to.get(), ELF_C_WRITE) < 0) {
        return {};
    }
    to.reset();
    if (::lseek(out.get(), 0, SEEK_SET) != 0) {
        return {};
    }
    return out;
}

} // namespace heapkit
