// SPDX-License-Identifier: MIT
#include "heapkit/runtime/cpu/snapshot_unwinder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <span>
#include <string_view>
#include <sys/auxv.h>
#include <unistd.h>
#include <vector>

namespace heapkit::runtime {
namespace {

// The vDSO's name as report_modules() gives it (libdwfl's own, "[vdso: PID]", would
// have its finder read the image through /proc/PID/mem).
constexpr std::string_view vdso_name = "[vdso]";

// The vDSO's whole image in this process's memory, section headers included (the kernel
// maps all of it): its runtime address and size in bytes. Empty when there is none.
std::span<const char> vdso_image() {
    auto base = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
    if (base == 0) {
        return {};
    }
    const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
    size_t size = header->e_shoff + size_t{header->e_shnum} * header->e_shentsize;
    const auto* segments = reinterpret_cast<const Elf64_Phdr*>(base + header->e_phoff);
    for (size_t i = 0; i < header->e_phnum; ++i) {
        if (segments[i].p_type == PT_LOAD) {
            size = std::max<size_t>(size, segments[i].p_offset + segments[i].p_filesz);
        }
    }
    return {reinterpret_cast<const char*>(base), size};
}

// The ELF file of a mapped module, as libdwfl's own finder opens it, but kept without a
// descriptor: the file is mapped, and a descriptor kept for the profile's length could
// be closed by the host and its number reused, then closed again by dwfl_end. The vDSO
// is read from a copy of its mapping.
int find_mapped_elf(Dwfl_Module* module, void** userdata, const char* name, Dwarf_Addr base,
                    char** file_name, Elf** elf) {
    if (name == vdso_name) {
        // A copy, made once (a few kB, the same for the process's life): elf_memory takes
        // an image libelf may convert in place, and the vDSO's mapping is read-only.
        static std::vector<char> copy = [] {
            auto image = vdso_image();
            return std::vector<char>(image.begin(), image.end());
        }();
        *elf = elf_memory(copy.data(), copy.size());
        return -1;
    }
    int fd = dwfl_linux_proc_find_elf(module, userdata, name, base, file_name, elf);
    if (fd < 0) {
        return fd; // none, or a deleted file's image read through /proc/PID/mem in *elf
    }
    if (*elf == nullptr) {
        *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    }
    if (*elf != nullptr) {
        elf_cntl(*elf, ELF_C_FDDONE); // libelf reads no more through it
    }
    ::close(fd);
    return -1;
}

// Unwinding needs .eh_frame only: no debug file is looked for (nor asked of debuginfod).
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word,
                 char**) {
    return -1;
}

const Dwfl_Callbacks callbacks = {
    .find_elf = find_mapped_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,
};

struct DwflEnd {
    void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};

struct FileClose {
    void operator()(FILE* file) const { std::fclose(file); }
};

// The modules mapped now, from /proc/self/maps, and the vDSO from the auxiliary vector.
// Not dwfl_linux_proc_report: it reads /proc/PID/auxv first, and a process that dropped
// privileges (setuid to a service user) is no longer dumpable, so its auxv and mem are
// root's and closed to it, while its maps stay readable (mode 0444, and a process may
// always read its own). Zero, or an errno.
int report_modules(Dwfl* dwfl) {
    std::unique_ptr<FILE, FileClose> maps(std::fopen("/proc/self/maps", "re"));
    if (!maps) {
        return errno;
    }
    dwfl_report_begin(dwfl);
    int reported = dwfl_linux_proc_maps_report(dwfl, maps.get());
    if (auto vdso = vdso_image(); reported == 0 && !vdso.empty()) {
        auto start = reinterpret_cast<uintptr_t>(vdso.data()); // runtime address
        if (dwfl_report_module(dwfl, vdso_name.data(), start, start + vdso.size()) == nullptr) {
            reported = -1;
        }
    }
    dwfl_report_end(dwfl, nullptr, nullptr);
    return reported;
}

// The one "thread" libdwfl is asked about: the snapshot being unwound.
constexpr pid_t snapshot_tid = 1;

} // namespace

struct SnapshotUnwinder::State {
    std::unique_ptr<Dwfl, DwflEnd> dwfl;
    const StackSnapshot* snapshot = nullptr;
    std::vector<uint64_t>* pcs = nullptr;
    size_t max_depth = 0;
    uint32_t depth = 0;
};

namespace {

using State = SnapshotUnwinder::State;

pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
    if (*thread_arg != nullptr) {
        return 0;
    }
    *thread_arg = arg;
    return snapshot_tid;
}

bool get_thread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
    *thread_arg = arg;
    return tid == snapshot_tid;
}

// Stack words from the copy; anything else is not read (the thread has moved on since).
bool read_snapshot(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
    const StackSnapshot& snapshot = *static_cast<State*>(arg)->snapshot;
    uint64_t sp = snapshot.registers[dwarf_sp];
    if (address < sp || address - sp > snapshot.stack_size ||
        snapshot.stack_size - (address - sp) < sizeof(Dwarf_Word)) {
        return false;
    }
    std::memcpy(result, snapshot.stack + (address - sp), sizeof(Dwarf_Word));
    return true;
}

bool set_registers(Dwfl_Thread* thread, void* arg) {
    const StackSnapshot& snapshot = *static_cast<State*>(arg)->snapshot;
    static_assert(sizeof(Dwarf_Word) == sizeof(uint64_t));
    return dwfl_thread_state_registers(thread, 0, snapshot_registers,
                                       reinterpret_cast<const Dwarf_Word*>(snapshot.registers));
}

const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = read_snapshot,
    .set_initial_registers = set_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

int take_frame(Dwfl_Frame* frame, void* arg) {
    State& state = *static_cast<State*>(arg);
    Dwarf_Addr pc = 0;
    if (!dwfl_frame_pc(frame, &pc, nullptr) || pc == 0) {
        return DWARF_CB_ABORT;
    }
    state.pcs->push_back(pc);
    ++state.depth;
    return state.depth < state.max_depth ? DWARF_CB_OK : DWARF_CB_ABORT;
}

} // namespace

SnapshotUnwinder::SnapshotUnwinder(std::unique_ptr<State> state)
    : m_state(std::move(state)) {}

SnapshotUnwinder::~SnapshotUnwinder() = default;

std::unique_ptr<SnapshotUnwinder> SnapshotUnwinder::for_this_process() {
    auto state = std::make_unique<State>();
    state->dwfl.reset(dwfl_begin(&callbacks));
    Dwfl* dwfl = state->dwfl.get();
    if (dwfl == nullptr) {
        return nullptr;
    }
    if (report_modules(dwfl) != 0 ||
        !dwfl_attach_state(dwfl, nullptr, getpid(), &thread_callbacks, state.get())) {
        return nullptr;
    }
    return std::unique_ptr<SnapshotUnwinder>(new SnapshotUnwinder(std::move(state)));
}

uint32_t SnapshotUnwinder::unwind(const StackSnapshot& snapshot, std::vector<uint64_t>& pcs,
                                  size_t max_depth) {
    State& state = *m_state;
    state.snapshot = &snapshot;
    state.pcs = &pcs;
    state.max_depth = max_depth;
    state.depth = 0;
    // An error past the first frames is the end of what can be unwound: keep what came.
    static_cast<void>(dwfl_getthread_frames(state.dwfl.get(), snapshot_tid, take_frame, &state));
    if (state.depth == 0 && max_depth > 0) {
        pcs.push_back(snapshot.registers[dwarf_pc]); // at least where the thread was
        state.depth = 1;
    }
    return state.depth;
}

} // namespace heapkit::runtime
