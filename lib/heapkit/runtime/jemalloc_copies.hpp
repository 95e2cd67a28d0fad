// SPDX-License-Identifier: MIT
// The copies of jemalloc in this process, however each is linked, and the one that holds
// the program's heap. dlsym(RTLD_DEFAULT) sees only dynamic symbols: it finds a
// libjemalloc.so.2 that is linked or preloaded, but not a copy linked statically into the
// executable (upstream redis and ClickHouse builds, a C program over libjemalloc_pic.a)
// nor tikv-jemallocator's `_rjem_` copy inside a Rust service, whose mallctl is only in
// the file's symbol table (.symtab). So each loaded object's file is read, .symtab where
// it has one and .dynsym otherwise, for a function whose name ends in "mallctl" beside one
// with the same prefix that ends in "malloc_stats_print": jemalloc's pair, under any
// prefix.
//
// Which copy holds the heap: the program's allocations go to the `malloc` that symbol
// lookup resolves (the executable's own copy comes before a preloaded one), and a Rust
// global allocator calls its prefixed copy by name. A copy whose `malloc` is shadowed by
// another's is never called: it is listed as unused, and its mallctl is never called (that
// would only set it up, arenas and all, in the host).
//
// Header-only, with nothing but the C library, and allocating nothing: the agent's loader
// (libc alone) and the runtime use it alike. Files are mapped read-only, descriptors
// closed at once, mappings undone before returning.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace heapkit::runtime {

using MallctlFunction = int (*)(const char*, void*, size_t*, void*, size_t);
using StatsWriteCallback = void (*)(void*, const char*);
using StatsPrintFunction = void (*)(StatsWriteCallback, void*, const char*);

// One copy of jemalloc: its two entry points (runtime addresses), the prefix of its public
// names, and the object that holds it.
struct JemallocCopy {
    MallctlFunction mallctl = nullptr;
    StatsPrintFunction stats_print = nullptr;
    const char* const* malloc_conf = nullptr; // its `malloc_conf` option string, if linked in
    char prefix[16] = {};  // "", "je_", "_rjem_", …: `mallctl` is prefix + "mallctl"
    char object[512] = {}; // the loaded object's file path (the executable's, for it)
    bool in_executable = false;
    bool exported = false;      // in the dynamic symbol table: dlsym would find it
    bool serves_malloc = false; // the process's `malloc` is this copy's
};

// Every copy found (up to `capacity`), and what else the search learnt.
struct JemallocCopies {
    static constexpr int capacity = 4;
    JemallocCopy copies[capacity];
    int count = 0;
    // The executable has no symbol table (stripped: `-s`, Cargo's strip = "symbols") and
    // carries jemalloc all the same (its own `malloc`, or jemalloc's strings): a static copy
    // that cannot be found. `stripped_prefix` says which variable would configure it, when
    // the file says ("_rjem_" for tikv-jemallocator's, else "").
    bool stripped_static = false;
    char stripped_prefix[16] = {};
    // The copy that holds the program's heap (see serving_copy), or -1.
    int serving = -1;
    // An unused copy's C++ operators are the process's: jemalloc's `operator new` takes
    // memory from its own copy, and its `operator delete` calls `free` by name, which is the
    // program's copy. Every delete of C++ code in the process then frees memory of one copy
    // through the other, and crashes (a static jemalloc with libjemalloc.so.2 preloaded
    // too). The index into `copies` of that copy, or -1. Symbol lookup order decides, as
    // for `malloc`.
    int split_operators = -1;
};

namespace jemalloc_copies_detail {

// A file mapped read-only for the search, unmapped when done; or bytes held elsewhere
// (the fuzz target's).
struct MappedFile {
    const unsigned char* bytes = nullptr;
    size_t size = 0;
    bool mapped_here = false;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(const unsigned char* borrowed, size_t length)
        : bytes(length >= sizeof(ElfW(Ehdr)) &&
                        reinterpret_cast<uintptr_t>(borrowed) % alignof(ElfW(Ehdr)) == 0
                    ? borrowed
                    : nullptr)
        , size(length) {}
    explicit MappedFile(const char* path) {
        int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return;
        }
        struct stat status {};
        if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
            static_cast<uint64_t>(status.st_size) >= sizeof(ElfW(Ehdr))) {
            void* mapped =
                ::mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (mapped != MAP_FAILED) {
                bytes = static_cast<const unsigned char*>(mapped);
                size = static_cast<size_t>(status.st_size);
                mapped_here = true;
            }
        }
        ::close(fd);
    }
    ~MappedFile() {
        if (mapped_here) {
            ::munmap(const_cast<unsigned char*>(bytes), size);
        }
    }
    bool holds(uint64_t offset, uint64_t length) const {
        return offset <= size && length <= size - offset;
    }
    // `count` records of T at `offset`, inside the file and aligned as T must be: a sound
    // ELF file aligns its headers and tables, and reading one that does not is undefined.
    template <typename T> bool holds_array(uint64_t offset, uint64_t count) const {
        return count <= size / sizeof(T) && holds(offset, count * sizeof(T)) &&
               (reinterpret_cast<uintptr_t>(bytes) + offset) % alignof(T) == 0;
    }
};

inline bool ends_with(const char* name, size_t length, const char* suffix) {
    size_t wanted = std::strlen(suffix);
    return length >= wanted && std::memcmp(name + length - wanted, suffix, wanted) == 0;
}

// A symbol table section and its strings, checked against the file's bounds.
struct SymbolTable {
    const ElfW(Sym) * symbols = nullptr;
    size_t count = 0;
    const char* strings = nullptr;
    size_t strings_size = 0;
};

// The file's .symtab if it has one, else its .dynsym; empty when neither is sound.
inline SymbolTable symbol_table(const MappedFile& file, bool* has_symtab) {
    SymbolTable table;
    *has_symtab = false;
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(file.bytes);
    if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
        header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_shentsize != sizeof(ElfW(Shdr)) ||
        !file.holds_array<ElfW(Shdr)>(header->e_shoff, header->e_shnum)) {
        return table;
    }
    const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(file.bytes + header->e_shoff);
    const ElfW(Shdr)* chosen = nullptr;
    for (int i = 0; i < header->e_shnum; ++i) {
        if (sections[i].sh_type == SHT_SYMTAB) {
            chosen = &sections[i];
            *has_symtab = true;
            break;
        }
        if (sections[i].sh_type == SHT_DYNSYM && chosen == nullptr) {
            chosen = &sections[i];
        }
    }
    if (chosen == nullptr || chosen->sh_link >= header->e_shnum ||
        !file.holds_array<ElfW(Sym)>(chosen->sh_offset, chosen->sh_size / sizeof(ElfW(Sym)))) {
        return table;
    }
    const ElfW(Shdr)& strings = sections[chosen->sh_link];
    if (strings.sh_type != SHT_STRTAB || !file.holds(strings.sh_offset, strings.sh_size) ||
        strings.sh_size == 0 || file.bytes[strings.sh_offset + strings.sh_size - 1] != '\0') {
        return table;
    }
    table.symbols = reinterpret_cast<const ElfW(Sym)*>(file.bytes + chosen->sh_offset);
    table.count = chosen->sh_size / sizeof(ElfW(Sym));
    table.strings = reinterpret_cast<const char*>(file.bytes + strings.sh_offset);
    table.strings_size = strings.sh_size;
    return table;
}

// True when `length` bytes at `address` (a runtime address) lie in one of the object's
// executable segments.
inline bool in_code(const dl_phdr_info& info, uintptr_t address, size_t length = 1) {
    for (int i = 0; i < info.dlpi_phnum; ++i) {
        const ElfW(Phdr)& segment = info.dlpi_phdr[i];
        uintptr_t start = info.dlpi_addr + segment.p_vaddr;
        if (segment.p_type == PT_LOAD && (segment.p_flags & PF_X) != 0 && address >= start &&
            address - start < segment.p_memsz && length <= segment.p_memsz - (address - start)) {
            return true;
        }
    }
    return false;
}

// How many bytes of a function same_code compares: in_code checks they are loaded first.
constexpr size_t compared_bytes = 32;

// True when the code at `address` (runtime) is the file's at `value` (its virtual address):
// the file read is the one loaded, not one rebuilt or replaced since the program started.
inline bool same_code(const MappedFile& file, uintptr_t value, uintptr_t address) {
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(file.bytes);
    if (header->e_phentsize != sizeof(ElfW(Phdr)) ||
        !file.holds_array<ElfW(Phdr)>(header->e_phoff, header->e_phnum)) {
        return false;
    }
    const auto* segments = reinterpret_cast<const ElfW(Phdr)*>(file.bytes + header->e_phoff);
    constexpr size_t compared = compared_bytes;
    for (int i = 0; i < header->e_phnum; ++i) {
        const ElfW(Phdr)& segment = segments[i];
        if (segment.p_type != PT_LOAD || value < segment.p_vaddr ||
            value - segment.p_vaddr + compared > segment.p_filesz) {
            continue;
        }
        uint64_t offset = segment.p_offset + (value - segment.p_vaddr);
        return file.holds(offset, compared) &&
               std::memcmp(file.bytes + offset, reinterpret_cast<const void*>(address), compared) ==
                   0;
    }
    return false;
}

struct Search {
    JemallocCopies* found;
    // An object before this one defines `malloc`: symbol lookup (the executable, then the
    // preloaded objects, then the libraries, the order dl_iterate_phdr reports them in)
    // resolves it there. dlsym cannot say: where the executable takes malloc's address, its
    // PLT entry is malloc's canonical address, and dlsym returns that.
    bool malloc_defined = false;
    bool new_defined = false; // likewise for `operator new`
    bool first = true;        // the first object dl_iterate_phdr reports is the executable
};

inline void copy_text(char* into, size_t capacity, const char* text, size_t length) {
    length = length < capacity - 1 ? length : capacity - 1;
    std::memcpy(into, text, length);
    into[length] = '\0';
}

// The executable's path, for opening it and for saying so: /proc/self/exe where it can be
// read (not after a privilege drop), else what the kernel was asked to run.
inline void executable_path(char* into, size_t capacity) {
    ssize_t got = ::readlink("/proc/self/exe", into, capacity - 1);
    if (got > 0) {
        into[got] = '\0';
        return;
    }
    const char* run = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
    copy_text(into, capacity, run != nullptr ? run : "", run != nullptr ? std::strlen(run) : 0);
}

// The bytes of the file's section named `wanted` (".rodata"), or none.
inline std::pair<const unsigned char*, size_t> section_bytes(const MappedFile& file,
                                                             const char* wanted) {
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(file.bytes);
    if (header->e_shentsize != sizeof(ElfW(Shdr)) || header->e_shstrndx >= header->e_shnum ||
        !file.holds_array<ElfW(Shdr)>(header->e_shoff, header->e_shnum)) {
        return {nullptr, 0};
    }
    const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(file.bytes + header->e_shoff);
    const ElfW(Shdr)& names = sections[header->e_shstrndx];
    if (!file.holds(names.sh_offset, names.sh_size)) {
        return {nullptr, 0};
    }
    size_t length = std::strlen(wanted);
    for (int i = 0; i < header->e_shnum; ++i) {
        const ElfW(Shdr)& section = sections[i];
        if (section.sh_type == SHT_PROGBITS && section.sh_name < names.sh_size &&
            names.sh_size - section.sh_name > length &&
            std::memcmp(file.bytes + names.sh_offset + section.sh_name, wanted, length + 1) == 0 &&
            file.holds(section.sh_offset, section.sh_size)) {
            return {file.bytes + section.sh_offset, section.sh_size};
        }
    }
    return {nullptr, 0};
}

// A stripped executable that carries jemalloc anyway: its own `malloc`, or jemalloc's
// message prefix among its read-only data. tikv-jemallocator's copy also holds its
// variable's name there.
inline void note_stripped_static(const MappedFile& file, bool own_malloc, JemallocCopies& found) {
    auto [data, size] = section_bytes(file, ".rodata");
    const char* rjem = "_RJEM_MALLOC_CONF";
    if (data != nullptr && ::memmem(data, size, rjem, std::strlen(rjem)) != nullptr) {
        found.stripped_static = true;
        copy_text(found.stripped_prefix, sizeof(found.stripped_prefix), "_rjem_", 6);
        return;
    }
    const char* mark = "<jemalloc>";
    found.stripped_static =
        own_malloc || (data != nullptr && ::memmem(data, size, mark, std::strlen(mark)) != nullptr);
}

// The jemalloc copies among one loaded object's symbols.
inline void search_object(const dl_phdr_info& info, bool executable, Search& search) {
    JemallocCopies& found = *search.found;
    char path[512];
    if (executable) {
        executable_path(path, sizeof(path));
    } else if (info.dlpi_name == nullptr || info.dlpi_name[0] == '\0') {
        return; // an object without a file to read (the vDSO's name opens nothing)
    } else {
        copy_text(path, sizeof(path), info.dlpi_name, std::strlen(info.dlpi_name));
    }
    // The executable through /proc/self/exe where it can be: the file that runs, even when
    // its path has been replaced since.
    MappedFile file(executable && ::access("/proc/self/exe", R_OK) == 0 ? "/proc/self/exe" : path);
    if (file.bytes == nullptr) {
        return;
    }
    bool has_symtab = false;
    SymbolTable table = symbol_table(file, &has_symtab);
    // Prefixes seen ending in "mallctl" and in "malloc_stats_print": few in any real file.
    constexpr int most = 4;
    struct Seen {
        size_t prefix_length;
        const char* name;
        uintptr_t address;
    } controls[most], printers[most], confs[most];
    int control_count = 0;
    int printer_count = 0;
    int conf_count = 0;
    bool defines_malloc = false;
    bool defines_new = false; // operator new(size_t)
    // libheapkit-fragmentation.so's malloc and operator new pass every call on to the next
    // definition (agent/interposers.cpp): they shadow none.
    bool passes_on = false;
    for (size_t i = 0; i < table.count; ++i) {
        const ElfW(Sym)& symbol = table.symbols[i];
        int type = ELF64_ST_TYPE(symbol.st_info);
        if ((type != STT_FUNC && type != STT_OBJECT) || symbol.st_shndx == SHN_UNDEF ||
            symbol.st_name >= table.strings_size) {
            continue;
        }
        const char* name = table.strings + symbol.st_name;
        size_t length = ::strnlen(name, table.strings_size - symbol.st_name);
        uintptr_t address = info.dlpi_addr + symbol.st_value;
        int binding = ELF64_ST_BIND(symbol.st_info);
        if (type == STT_FUNC && length == 6 && std::memcmp(name, "malloc", 6) == 0 &&
            (binding == STB_GLOBAL || binding == STB_WEAK)) {
            defines_malloc = true;
        }
        if (type == STT_FUNC && length == 5 && std::memcmp(name, "_Znwm", 5) == 0 &&
            (binding == STB_GLOBAL || binding == STB_WEAK)) {
            defines_new = true;
        }
        static constexpr char interposer[] = "heapkit_fragmentation_interposer";
        passes_on = passes_on || (type == STT_FUNC && length == sizeof(interposer) - 1 &&
                                  std::memcmp(name, interposer, length) == 0);
        if (type == STT_OBJECT) {
            if (ends_with(name, length, "malloc_conf") &&
                length - 11 < sizeof(JemallocCopy::prefix) &&
                symbol.st_size == sizeof(const char*) && conf_count < most) {
                confs[conf_count++] = {length - 11, name, address};
            }
            continue;
        }
        if (ends_with(name, length, "mallctl") && length - 7 < sizeof(JemallocCopy::prefix) &&
            control_count < most && in_code(info, address, compared_bytes) &&
            same_code(file, symbol.st_value, address)) {
            controls[control_count++] = {length - 7, name, address};
        } else if (ends_with(name, length, "malloc_stats_print") &&
                   length - 18 < sizeof(JemallocCopy::prefix) && printer_count < most &&
                   in_code(info, address, compared_bytes) &&
                   same_code(file, symbol.st_value, address)) {
            printers[printer_count++] = {length - 18, name, address};
        }
    }
    if (executable && !has_symtab && control_count == 0) {
        note_stripped_static(file, defines_malloc, found);
    }
    defines_malloc = defines_malloc && !passes_on;
    defines_new = defines_new && !passes_on;
    bool malloc_here = defines_malloc && !search.malloc_defined;
    search.malloc_defined = search.malloc_defined || defines_malloc;
    bool new_here = defines_new && !search.new_defined;
    search.new_defined = search.new_defined || defines_new;
    for (int c = 0; c < control_count && found.count < JemallocCopies::capacity; ++c) {
        for (int p = 0; p < printer_count; ++p) {
            if (printers[p].prefix_length != controls[c].prefix_length ||
                std::memcmp(printers[p].name, controls[c].name, controls[c].prefix_length) != 0) {
                continue;
            }
            JemallocCopy& copy = found.copies[found.count++];
            copy.mallctl = reinterpret_cast<MallctlFunction>(controls[c].address);
            copy.stats_print = reinterpret_cast<StatsPrintFunction>(printers[p].address);
            copy_text(copy.prefix, sizeof(copy.prefix), controls[c].name,
                      controls[c].prefix_length);
            copy_text(copy.object, sizeof(copy.object), path, std::strlen(path));
            copy.in_executable = executable;
            copy.exported = !has_symtab;
            copy.serves_malloc = copy.prefix[0] == '\0' && malloc_here;
            if (new_here && copy.prefix[0] == '\0' && !malloc_here) {
                found.split_operators = found.count - 1; // operator new here, malloc before
            }
            for (int m = 0; m < conf_count; ++m) {
                if (confs[m].prefix_length == controls[c].prefix_length &&
                    std::memcmp(confs[m].name, controls[c].name, controls[c].prefix_length) == 0) {
                    copy.malloc_conf = reinterpret_cast<const char* const*>(confs[m].address);
                }
            }
            break;
        }
    }
}

// Of the copies found, the one that holds the program's heap: the executable's own copy
// (its `malloc`, or the prefixed one a Rust global allocator calls by name), else the copy
// whose `malloc` the process uses (linked or preloaded libjemalloc.so.2), else a prefixed
// copy in a library. An unprefixed copy whose `malloc` is shadowed is never called.
inline int serving_copy(const JemallocCopies& found) {
    int chosen = -1;
    int rank = 0;
    for (int i = 0; i < found.count; ++i) {
        const JemallocCopy& copy = found.copies[i];
        int this_rank = copy.in_executable && (copy.serves_malloc || copy.prefix[0] != '\0') ? 3
                        : copy.serves_malloc                                                 ? 2
                        : copy.prefix[0] != '\0'                                             ? 1
                                                                                             : 0;
        if (this_rank > rank) {
            chosen = i;
            rank = this_rank;
        }
    }
    return chosen;
}

} // namespace jemalloc_copies_detail

// True when a copy is never called: unprefixed, and its `malloc` shadowed by another's.
inline bool is_unused(const JemallocCopy& copy) {
    return copy.prefix[0] == '\0' && !copy.serves_malloc;
}

// The copy this process's `malloc` is (where a guest's own allocations go), or null.
inline const JemallocCopy* own_copy(const JemallocCopies& found) {
    for (int i = 0; i < found.count; ++i) {
        if (found.copies[i].serves_malloc) {
            return &found.copies[i];
        }
    }
    return nullptr;
}

// The environment variable that configures a copy: jemalloc reads its prefix, upper-cased,
// before "MALLOC_CONF" (tikv-jemallocator's `_RJEM_MALLOC_CONF`, a je_ build's
// `JE_MALLOC_CONF`). Written into `into`, NUL-terminated.
inline void conf_variable(const char* prefix, char* into, size_t capacity) {
    size_t at = 0;
    for (; prefix[at] != '\0' && at + 12 < capacity; ++at) {
        into[at] = static_cast<char>(std::toupper(static_cast<unsigned char>(prefix[at])));
    }
    std::memcpy(into + at, "MALLOC_CONF", 12);
}

// Why no copy of jemalloc can be served, for the operator, into `into` (NUL-terminated).
inline void describe_missing(const JemallocCopies& found, char* into, size_t capacity) {
    if (found.split_operators >= 0 && found.serving >= 0) {
        std::snprintf(into, capacity,
                      "%s is loaded beside the program's own jemalloc (%s): its operator new "
                      "takes memory from one copy and its operator delete frees it through the "
                      "other, which crashes any C++ code in this process, the agent's too; "
                      "preload the agent alone: LD_PRELOAD=libheapkit-agent.so",
                      found.copies[found.split_operators].object,
                      found.copies[found.serving].object);
        return;
    }
    if (found.stripped_static) {
        char variable[32];
        conf_variable(found.stripped_prefix, variable, sizeof(variable));
        std::snprintf(into, capacity,
                      "the executable carries its own jemalloc but no symbol table to find its "
                      "mallctl by (stripped): keep the symbol table (no -s or strip; Cargo: "
                      "strip = \"debuginfo\" or false), run with %s=prof:true",
                      variable);
        return;
    }
    std::snprintf(into, capacity,
                  "no jemalloc in this process (no mallctl under any prefix in the executable "
                  "or its libraries); a program on the C library's malloc can have it "
                  "preloaded: LD_PRELOAD=\"libjemalloc.so.2 libheapkit-agent.so\"");
}

// Finds every copy of jemalloc in this process, and the one that serves (`serving`).
// Allocates nothing.
inline void find_jemalloc_copies(JemallocCopies& found) {
    using namespace jemalloc_copies_detail;
    found = JemallocCopies{};
    Search search{&found};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto& search = *static_cast<Search*>(data);
            bool executable = search.first;
            search.first = false;
            search_object(*info, executable, search);
            return search.found->count < JemallocCopies::capacity ? 0 : 1;
        },
        &search);
    found.serving = serving_copy(found);
}

} // namespace heapkit::runtime
