// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/debug_files/debug_search.hpp"
#include "heapkit/symbolize/dwarf/dwarf_frames.hpp"
#include "heapkit/symbolize/elf/function_bounds.hpp"
#include "heapkit/symbolize/elf/symbol_index.hpp"
#include "heapkit/util/error.hpp"

#include <elfutils/libdwfl.h>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heapkit {

// One ELF file opened through libdwfl, reported at bias 0 so that libdwfl's addresses
// are the file's own ELF virtual addresses. Owns its Dwfl session; `search` must
// outlive it. What open() reads (segments, build id, identity) stays after close_file()
// has let go of the file, which the calls that need more open again.
class ElfModule {
public:
    // Opens `path`; an error names the path and says why.
    static Result<std::unique_ptr<ElfModule>> open(const std::string& path,
                                                   const DebugSearch& search);

    ElfModule(const ElfModule&) = delete;
    ElfModule& operator=(const ElfModule&) = delete;

    // The ELF header's e_machine (EM_X86_64, EM_AARCH64, ...).
    unsigned machine() const { return m_machine; }

    // Lower-case hex NT_GNU_BUILD_ID, or empty.
    const std::string& build_id() const { return m_build_id; }
    const std::string& path() const { return m_path; }

    // The file's modification time (ns since the Unix epoch) and size in bytes, when it
    // was opened.
    int64_t modified_nanos() const { return m_stamp->modified_nanos; }
    uint64_t file_size() const { return m_stamp->size; }

    // True when the file defines `mallctl`: it is jemalloc itself (linked or preloaded),
    // so code in it at the leaf end of a stack is allocator-internal even when unnamed.
    // Asked of the file's own symbol tables, once.
    bool is_jemalloc() const;

    // True when DWARF was found (in the file or a separate debug file).
    bool has_dwarf() const;

    // The bytes of the DWARF found (its .debug_* sections, as inflated), 0 without DWARF:
    // what an index build's memory goes with.
    uint64_t dwarf_bytes() const;

    // True when the file or its separate debug file has a full symbol table (.symtab,
    // or the compressed .gnu_debugdata some distributions keep), not only .dynsym's
    // exports. May look for the debug file, as has_dwarf() does.
    bool has_symtab() const;

    // True when the file's .dynsym defines functions (exports, not only imports): these
    // name its exported functions even where it is stripped.
    bool has_dynsym() const;

    // Whether this file can be what the process mapped at [start, limit) from
    // `file_offset` with execute permission: an executable PT_LOAD segment mapped
    // exactly as ld.so and the kernel map it, for some page size from 4 KiB up to the
    // segment's alignment: the offset its page starts at, as many pages as its file
    // bytes span, at a page-aligned address (its own vaddr for a non-PIE executable).
    // Another build of the same program mostly fails this; see build_id() for the rest.
    bool fits_mapping(const Module& mapping) const;

    // ELF virtual address of a file offset, through the executable PT_LOAD segment
    // holding it (nullopt when none does).
    std::optional<uint64_t> vaddr_of_file_offset(uint64_t file_offset) const;

    // The frames at ELF vaddr `vaddr`, innermost first: the DWARF inline chain with
    // files and lines when there is DWARF (its outermost function named by the symbol
    // containing the address, when there is one), else that symbol's name alone
    // (.symtab, else .dynsym). Symbol sizes are honoured: an address past a symbol's end
    // gets no name, unless a sizeless label reaches it (see SymbolIndex). Empty when
    // nothing names the address. Texts are kept in `strings`.
    std::vector<Frame> frames_at(uint64_t vaddr, FrameStrings& strings) const;

    // The same answer, for a caller that asks about every address (an address index):
    // faster over many addresses, and holding more memory until forget_answers().
    // `in_dwarf_scope` false: `vaddr` is in none of answer_bounds()'s DWARF scopes, where
    // DWARF has nothing to say (its symbol answers, without asking DWARF).
    std::vector<Frame> frames_for_index(uint64_t vaddr, FrameStrings& strings,
                                        bool in_dwarf_scope) const;

    // The ELF vaddr where the function holding ELF vaddr `vaddr` starts, from the file's
    // call-frame information (.eh_frame, else .debug_frame), which stripped files keep:
    // an identity for an address no name reaches. nullopt when no FDE covers it.
    std::optional<uint64_t> function_start(uint64_t vaddr) const;

    // The ELF vaddr ranges [start, end) of the executable PT_LOAD segments' file bytes,
    // by start: the addresses a mapping of the file can run.
    std::vector<std::pair<uint64_t, uint64_t>> code_extents() const;

    // ELF vaddrs where frames_at()'s answer may change (symbols' reaches and, with
    // DWARF, its units, lines and scopes), unsorted, with repeats; and the ranges of the
    // DWARF scopes (functions, inlined instances, blocks), where alone DWARF names code.
    // frames_for_index()'s DWARF answers are prepared from the same reading of the DWARF,
    // kept until forget_answers().
    struct AnswerBounds {
        std::vector<uint64_t> bounds;
        std::vector<std::pair<uint64_t, uint64_t>> dwarf_scopes; // [low, high), unsorted
    };
    AnswerBounds answer_bounds() const;

    // Drops what frames_at() keeps of DWARF between calls (it is found again on the next
    // call): after a call with texts in a pool about to go, and to give memory back.
    void forget_answers() const { m_dwarf.reset(); }

    // Closes the file: libdwfl's session with its descriptor and libelf's private mapping
    // of the whole file, and what was read through them (symbol table, DWARF, call-frame
    // bounds). What open() read stays, and is_jemalloc()'s answer once given; a later call
    // that needs the file opens it again, and finds nothing there (no names) if it is no
    // longer the file opened first (device, inode, size, modification time). For a
    // long-running process that names its frames from address indexes: between profiles
    // it holds no descriptor, and none of the file's pages. Not while another thread uses
    // this module.
    void close_file() const;

    // errno of opening the file again after close_file(), when that failed (EMFILE: the
    // process is out of descriptors, which is its problem, not the file's); else 0.
    int reopen_error() const { return m_session_errno; }

    // True when this file's DWARF was found and read in this process: reading it again
    // after close_file() would cost what an address index spares.
    bool dwarf_read() const { return m_dwarf_read; }

private:
    struct DwflDeleter {
        void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
    };
    struct Segment { // an executable PT_LOAD
        uint64_t file_offset;
        uint64_t file_size;
        uint64_t vaddr;
        uint64_t align; // p_align: the largest page size it can be mapped with
    };
    struct FileStamp { // what tells the file opened first from another at its path
        uint64_t device = 0;
        uint64_t inode = 0;
        uint64_t size = 0;
        int64_t modified_nanos = 0;
        bool operator==(const FileStamp&) const = default;
    };
    ElfModule() = default;
    // Opens m_path in a new Dwfl session (m_dwfl, m_module); a file that is no longer the
    // one first opened (m_stamp) is refused.
    Result<void> open_session() const;
    // The module, its session opened again after close_file(); null when that failed.
    Dwfl_Module* session() const;
    const Segment* segment_of(uint64_t file_offset) const;
    bool maps_exactly(const Segment& segment, uint64_t page, const Module& mapping) const;
    std::vector<Frame> symbol_frames(uint64_t vaddr, FrameStrings& strings) const;
    std::vector<Frame> frames(uint64_t vaddr, FrameStrings& strings, bool painted) const;

    std::string m_path;
    const DebugSearch* m_search = nullptr;
    mutable std::optional<FileStamp> m_stamp; // from the first open: set once open() returns
    mutable std::unique_ptr<Dwfl, DwflDeleter> m_dwfl;
    mutable Dwfl_Module* m_module = nullptr; // borrowed from m_dwfl; null: closed
    mutable bool m_session_failed = false;   // opening again failed (until close_file())
    mutable int m_session_errno = 0;         // its errno
    mutable bool m_dwarf_read = false;
    uint64_t m_bias = 0; // libdwfl address minus ELF vaddr (0 by construction)
    std::vector<Segment> m_segments;
    std::string m_build_id;
    bool m_is_executable = false; // ET_EXEC: loaded at its link addresses
    unsigned m_machine = 0;
    mutable std::optional<bool> m_is_jemalloc;      // asked on first use
    mutable std::optional<SymbolIndex> m_symbols;   // built on the first lookup
    mutable std::unique_ptr<DwarfFrames> m_dwarf;   // made on the first DWARF lookup
    mutable std::optional<FunctionBounds> m_bounds; // read on the first unnamed address
};

} // namespace heapkit
