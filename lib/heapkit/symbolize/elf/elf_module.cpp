// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/elf_module.hpp"

#include "heapkit/symbolize/dwarf/dwarf_frames.hpp"
#include "heapkit/symbolize/elf/symbol_lookup.hpp"
#include "heapkit/symbolize/index/answer_bounds.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <sys/stat.h>

namespace heapkit {
namespace {

std::string hex(const unsigned char* bytes, int length) {
    std::string text;
    text.reserve(static_cast<size_t>(length) * 2);
    for (int i = 0; i < length; ++i) {
        fmt::format_to(std::back_inserter(text), "{:02x}", bytes[i]);
    }
    return text;
}

// libdwfl's last error. dwfl_errmsg can return null (a libelf error whose own message
// was already taken, say), and fmt throws on a null string: found by the fuzzer.
const char* last_dwfl_error() {
    const char* message = dwfl_errmsg(-1);
    return message != nullptr ? message : "unknown libdwfl error";
}

bool has_symbol_table(Elf* elf) {
    size_t names = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) {
        return false;
    }
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr) {
            continue;
        }
        const char* name = elf_strptr(elf, names, header.sh_name);
        if (header.sh_type == SHT_SYMTAB ||
            (name != nullptr && std::string_view(name) == ".gnu_debugdata")) {
            return true;
        }
    }
    return false;
}

// The function's name within a symbol's: dynamic symbols carry their version
// ("__libc_start_main@@GLIBC_2.34"), and GCC names local aliases "f.localalias".
std::string_view function_name_of(std::string_view symbol) {
    size_t at = symbol.find('@');
    if (at != 0 && at != std::string_view::npos) {
        symbol = symbol.substr(0, at);
    }
    constexpr std::string_view local_alias = ".localalias";
    if (symbol.size() > local_alias.size() && symbol.ends_with(local_alias)) {
        symbol.remove_suffix(local_alias.size());
    }
    return symbol;
}

} // namespace

Result<std::unique_ptr<ElfModule>> ElfModule::open(const std::string& path,
                                                   const DebugSearch& search) {
    std::unique_ptr<ElfModule> module(new ElfModule);
    module->m_path = path;
    module->m_search = &search;
    if (auto opened = module->open_session(); !opened) {
        return tl::unexpected(opened.error());
    }
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(module->m_module, &bias); // borrowed from the Dwfl
    size_t count = 0;
    GElf_Ehdr file_header;
    if (elf == nullptr || elf_getphdrnum(elf, &count) != 0 ||
        gelf_getehdr(elf, &file_header) == nullptr) {
        return fail("{}: cannot read program headers: {}", path, last_dwfl_error());
    }
    module->m_bias = bias;
    module->m_is_executable = file_header.e_type == ET_EXEC;
    module->m_machine = file_header.e_machine;
    for (size_t i = 0; i < count; ++i) {
        GElf_Phdr header;
        // Only code is ever looked up, and the page below an executable segment's start
        // may belong to the segment before it: keep executable segments alone.
        if (gelf_getphdr(elf, static_cast<int>(i), &header) != nullptr &&
            header.p_type == PT_LOAD && (header.p_flags & PF_X) != 0) {
            module->m_segments.push_back(
                {header.p_offset, header.p_filesz, header.p_vaddr, header.p_align});
        }
    }
    const unsigned char* id = nullptr;
    GElf_Addr id_vaddr = 0;
    int id_length = dwfl_module_build_id(module->m_module, &id, &id_vaddr);
    if (id_length > 0) {
        module->m_build_id = hex(id, id_length);
    }
    return module;
}

Result<void> ElfModule::open_session() const {
    const std::string& path = m_path;
    std::unique_ptr<Dwfl, DwflDeleter> session(dwfl_begin(m_search->callbacks()));
    Dwfl* dwfl = session.get();
    if (dwfl == nullptr) {
        return fail("{}: cannot start libdwfl: {}", path, last_dwfl_error());
    }
    // Opened here, not by libdwfl: a failure keeps its errno (out of descriptors is the
    // process's problem, not the file's), and the descriptor is close-on-exec (libdwfl's
    // is not), so that a service's kept files do not leak into every program it runs.
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file) {
        return fail_system(errno, "{}: cannot open: {}", path, std::strerror(errno));
    }
    struct stat status {};
    FileStamp stamp;
    if (::fstat(file.get(), &status) == 0) {
        stamp = {static_cast<uint64_t>(status.st_dev), static_cast<uint64_t>(status.st_ino),
                 static_cast<uint64_t>(status.st_size),
                 int64_t{status.st_mtim.tv_sec} * 1'000'000'000 + status.st_mtim.tv_nsec};
    }
    if (m_stamp && stamp != *m_stamp) {
        // Opened again after close_file(): what was read at first (segments, build id)
        // would not describe this file.
        return fail("{}: changed on disk since it was first opened", path);
    }
    dwfl_report_begin(dwfl);
    // Base 0 with add_p_vaddr: libdwfl addresses equal the file's ELF vaddrs. On success
    // the module owns the descriptor; on failure it is still ours.
    Dwfl_Module* module = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), file.get(), 0, true);
    if (module == nullptr) {
        return fail("{}: cannot open: {}", path, last_dwfl_error());
    }
    static_cast<void>(file.release());
    dwfl_report_end(dwfl, nullptr, nullptr);
    m_search->attach(module);
    m_stamp = stamp;
    m_dwfl = std::move(session);
    m_module = module;
    return {};
}

Dwfl_Module* ElfModule::session() const {
    if (m_module == nullptr && !m_session_failed) {
        if (auto opened = open_session(); !opened) {
            m_session_failed = true;
            m_session_errno = opened.error().system_error;
        }
    }
    return m_module;
}

void ElfModule::close_file() const {
    // What borrows from the session goes first.
    m_dwarf.reset();
    m_symbols.reset();
    m_bounds.reset();
    m_module = nullptr;
    m_dwfl.reset();
    m_session_failed = false;
    m_session_errno = 0;
}

bool ElfModule::is_jemalloc() const {
    if (!m_is_jemalloc) {
        Dwarf_Addr bias = 0;
        Dwfl_Module* module = session();
        Elf* elf = module != nullptr ? dwfl_module_getelf(module, &bias) : nullptr;
        m_is_jemalloc = elf != nullptr && defines_symbol(elf, "mallctl");
    }
    return *m_is_jemalloc;
}

// The kernel maps whole pages, so a mapping of a segment whose p_offset is not
// page-aligned starts at the page below it; its offsets down to there are the segment's.
constexpr uint64_t page_size = 4096;

const ElfModule::Segment* ElfModule::segment_of(uint64_t file_offset) const {
    for (const Segment& segment : m_segments) {
        uint64_t first = segment.file_offset & ~(page_size - 1);
        if (file_offset >= first && file_offset < segment.file_offset + segment.file_size) {
            return &segment;
        }
    }
    return nullptr;
}

std::optional<uint64_t> ElfModule::vaddr_of_file_offset(uint64_t file_offset) const {
    const Segment* segment = segment_of(file_offset);
    if (segment == nullptr) {
        return std::nullopt;
    }
    return segment->vaddr - segment->file_offset + file_offset; // may sit below p_offset
}

bool ElfModule::maps_exactly(const Segment& segment, uint64_t page, const Module& mapping) const {
    uint64_t mask = ~(page - 1);
    uint64_t first_vaddr = segment.vaddr & mask;
    uint64_t end_vaddr = (segment.vaddr + segment.file_size + page - 1) & mask;
    if (mapping.file_offset != (segment.file_offset & mask) || (mapping.start & ~mask) != 0 ||
        mapping.limit - mapping.start != end_vaddr - first_vaddr) {
        return false;
    }
    return !m_is_executable || mapping.start == first_vaddr;
}

bool ElfModule::fits_mapping(const Module& mapping) const {
    if (mapping.limit <= mapping.start) {
        return false;
    }
    for (const Segment& segment : m_segments) {
        // 4 KiB pages on x86-64; 16 or 64 KiB on some arm64 and ppc64 kernels.
        for (uint64_t page = page_size; page <= std::max(page_size, segment.align) && page != 0;
             page *= 2) {
            if (maps_exactly(segment, page, mapping)) {
                return true;
            }
        }
    }
    return false;
}

bool ElfModule::has_dwarf() const {
    // Finding DWARF may mean reading a separate debug file: only when names are wanted.
    // libdwfl remembers the answer.
    Dwarf_Addr bias = 0;
    Dwfl_Module* module = session();
    bool found = module != nullptr && dwfl_module_getdwarf(module, &bias) != nullptr;
    m_dwarf_read = m_dwarf_read || found;
    return found;
}

uint64_t ElfModule::dwarf_bytes() const {
    Dwarf_Addr bias = 0;
    Dwfl_Module* module = session();
    Dwarf* dwarf = module != nullptr ? dwfl_module_getdwarf(module, &bias) : nullptr;
    Elf* elf = dwarf != nullptr ? dwarf_getelf(dwarf) : nullptr; // borrowed
    size_t names = 0;
    if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) {
        return 0;
    }
    uint64_t bytes = 0;
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
        GElf_Shdr header;
        GElf_Chdr compressed;
        const char* name = gelf_getshdr(section, &header) != nullptr
                               ? elf_strptr(elf, names, header.sh_name)
                               : nullptr;
        if (name == nullptr || !std::string_view(name).starts_with(".debug_")) {
            continue;
        }
        bool deflated = (header.sh_flags & SHF_COMPRESSED) != 0 &&
                        gelf_getchdr(section, &compressed) != nullptr;
        bytes += deflated ? compressed.ch_size : header.sh_size;
    }
    return bytes;
}

bool ElfModule::has_symtab() const {
    Dwarf_Addr bias = 0;
    Dwfl_Module* module = session();
    if (module == nullptr) {
        return false;
    }
    if (has_symbol_table(dwfl_module_getelf(module, &bias))) {
        return true;
    }
    Dwarf* dwarf = dwfl_module_getdwarf(module, &bias); // borrowed; finds the debug file
    m_dwarf_read = m_dwarf_read || dwarf != nullptr;
    return dwarf != nullptr && has_symbol_table(dwarf_getelf(dwarf));
}

bool ElfModule::has_dynsym() const {
    Dwarf_Addr bias = 0;
    Dwfl_Module* module = session();
    Elf* elf = module != nullptr ? dwfl_module_getelf(module, &bias) : nullptr;
    for (Elf_Scn* section = nullptr; elf != nullptr && (section = elf_nextscn(elf, section));) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_DYNSYM ||
            header.sh_entsize == 0) {
            continue;
        }
        Elf_Data* data = elf_getdata(section, nullptr);
        size_t count = data == nullptr ? 0 : header.sh_size / header.sh_entsize;
        for (size_t i = 1; i < count; ++i) { // a program's are mostly imports: look for code
            GElf_Sym symbol;
            if (gelf_getsym(data, static_cast<int>(i), &symbol) != nullptr &&
                symbol.st_shndx != SHN_UNDEF && GELF_ST_TYPE(symbol.st_info) == STT_FUNC) {
                return true;
            }
        }
    }
    return false;
}

std::vector<Frame> ElfModule::frames_at(uint64_t vaddr, FrameStrings& strings) const {
    return frames(vaddr, strings, false);
}

std::vector<Frame> ElfModule::frames_for_index(uint64_t vaddr, FrameStrings& strings,
                                               bool in_dwarf_scope) const {
    return in_dwarf_scope ? frames(vaddr, strings, true) : symbol_frames(vaddr, strings);
}

std::vector<Frame> ElfModule::frames(uint64_t vaddr, FrameStrings& strings, bool painted) const {
    std::vector<Frame> symbol = symbol_frames(vaddr, strings);
    if (has_dwarf()) {
        if (!m_dwarf) {
            m_dwarf = std::make_unique<DwarfFrames>(m_module); // opened by has_dwarf()
        }
        Dwarf_Addr address = vaddr + m_bias;
        std::vector<Frame> frames =
            painted ? m_dwarf->at_painted(address, strings) : m_dwarf->at(address, strings);
        // The function holding the code goes by its symbol's name when one contains the
        // address (as llvm-symbolizer does): the exported name ("setlocale") rather than
        // an internal alias DWARF may carry ("__GI_setlocale"). Inlined frames have no
        // symbol of their own and keep DWARF's names; so does a function whose code was
        // folded with another's, when the symbol table picked the other: DWARF's file
        // and line are its own.
        if (!frames.empty() && !symbol.empty() &&
            !m_symbols->has_folded_twin(vaddr + m_bias, frames.back().system_name)) {
            frames.back().name = symbol.front().name;
            frames.back().system_name = symbol.front().system_name;
        }
        if (!frames.empty() && !frames.back().name.empty()) {
            return frames;
        }
    }
    return symbol;
}

std::optional<uint64_t> ElfModule::function_start(uint64_t vaddr) const {
    if (!m_bounds) {
        Dwarf_Addr bias = 0;
        Dwfl_Module* module = session();
        if (module == nullptr) {
            return std::nullopt;
        }
        m_bounds.emplace(dwfl_module_getelf(module, &bias)); // the file's own sections
    }
    return m_bounds->start_of(vaddr);
}

std::vector<std::pair<uint64_t, uint64_t>> ElfModule::code_extents() const {
    std::vector<std::pair<uint64_t, uint64_t>> extents;
    for (const Segment& segment : m_segments) {
        extents.emplace_back(segment.vaddr, segment.vaddr + segment.file_size);
    }
    std::sort(extents.begin(), extents.end());
    return extents;
}

ElfModule::AnswerBounds ElfModule::answer_bounds() const {
    AnswerBounds answer;
    if (session() == nullptr) {
        return answer;
    }
    if (!m_symbols) {
        m_symbols.emplace(m_module);
    }
    m_symbols->append_bounds(answer.bounds);
    if (has_dwarf()) {
        if (!m_dwarf) {
            m_dwarf = std::make_unique<DwarfFrames>(m_module); // opened by has_dwarf()
        }
        // frames_for_index() paints each unit from the walk that finds its bounds.
        append_dwarf_bounds(
            m_module, answer.bounds, answer.dwarf_scopes,
            [this](Dwarf_Die* cu, const CodeTree& tree) { m_dwarf->paint(cu, tree); },
            &m_dwarf->line_positions());
    }
    return answer;
}

std::vector<Frame> ElfModule::symbol_frames(uint64_t vaddr, FrameStrings& strings) const {
    if (session() == nullptr) {
        return {};
    }
    if (!m_symbols) {
        m_symbols.emplace(m_module);
    }
    const char* name = m_symbols->name_at(vaddr + m_bias);
    if (name == nullptr) {
        return {};
    }
    return {Frame{strings.demangled(function_name_of(name)), strings.intern(name), {}, 0, 0, 0}};
}

} // namespace heapkit
