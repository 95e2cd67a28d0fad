// SPDX-License-Identifier: MIT
#include "cfi_unwinder.hpp"

#include "heapkit/symbolize/elf/eh_frame_encoding.hpp"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <optional>

namespace heapkit::agent {

#if defined(__x86_64__)

namespace {

using eh_frame::Encoded;

// DWARF's x86-64 register numbers: 0-15 the general registers, 16 the return address.
constexpr int register_count = 17;
constexpr int rbp = 6;
constexpr int rsp = 7;
constexpr int return_address = 16;
// How far above its first frame a stack may reach, and how many remember_state levels a
// row may hold: far past what compilers write.
constexpr uint64_t most_stack = uint64_t{1} << 30;
constexpr int most_remembered = 8;

struct Registers {
    uint64_t value[register_count];
    bool known[register_count];
};

// at_register: saved at a register's value plus an offset (DW_CFA_expression's
// DW_OP_breg<N> OFFSET, which GCC writes for rbp in a realigned frame).
enum class Rule : uint8_t { same, undefined, offset, val_offset, copy, at_register };

// Trivial types, set where they are made: a walk makes a few rows a frame, and a
// remember_state stack of them (zeroing those took most of a walk's time).
struct RegisterRule {
    Rule rule;       // Rule::same is 0
    uint8_t base;    // at_register: the register
    int64_t operand; // the offset from the CFA (or from `base`), or the register copied
};

// The state of one row of the call frame table: the CFA and how each register is found.
struct Row {
    int cfa_register;
    int64_t cfa_offset;
    // A CFA given by an expression: only GCC's for a realigned stack (DW_OP_breg<N> OFFSET;
    // DW_OP_deref: the CFA saved in the frame) is evaluated; any other ends the walk.
    bool cfa_expression;
    const uint8_t* cfa_expression_bytes;
    uint64_t cfa_expression_size;
    RegisterRule rules[register_count];
};

struct Cie {
    uint64_t code_align = 1;
    int64_t data_align = -8;
    uint64_t return_register = return_address;
    uint8_t fde_encoding = DW_EH_PE_absptr;
    bool signal_frame = false;
    bool augmentation_data = false; // "z": each FDE's instructions follow its own data
    const uint8_t* instructions = nullptr;
    const uint8_t* end = nullptr;
};

// An FDE found for a pc: its CIE, where its instructions start and end, and its first pc.
struct Fde {
    Cie cie;
    uint64_t pc_begin = 0;
    const uint8_t* instructions = nullptr;
    const uint8_t* end = nullptr;
};

// A value in `encoding`, applied relative to the runtime address of its own field (pcrel)
// or of .eh_frame_hdr (datarel).
bool read_encoded(Encoded& fields, uint8_t encoding, uint64_t hdr, uint64_t* out) {
    uint64_t field = reinterpret_cast<uint64_t>(fields.position());
    auto raw = fields.value(encoding);
    if (encoding == DW_EH_PE_omit || !raw) {
        return false;
    }
    auto value = eh_frame::applied(*raw, encoding, field, hdr, 8);
    if (!value) {
        return false;
    }
    *out = *value;
    return true;
}

bool read_cie(const uint8_t* at, const uint8_t* limit, Cie* cie) {
    Encoded header(at, limit, false, 8);
    auto format = eh_frame::entry_format(header, limit);
    if (!format || format->end < header.position()) {
        return false;
    }
    // Every field read within the entry.
    Encoded fields(header.position(), format->end, false, 8);
    auto id = fields.value(format->offset_size == 8 ? DW_EH_PE_udata8 : DW_EH_PE_udata4);
    auto version = fields.byte();
    if (!id || *id != 0 || !version || (*version != 1 && *version != 3)) {
        return false;
    }
    const char* augmentation = reinterpret_cast<const char*>(fields.position());
    size_t length = ::strnlen(augmentation, static_cast<size_t>(format->end - fields.position()));
    if (augmentation + length >= reinterpret_cast<const char*>(format->end) ||
        std::strstr(augmentation, "eh") != nullptr) {
        return false;
    }
    fields = Encoded(fields.position() + length + 1, format->end, false, 8);
    auto code_align = fields.value(DW_EH_PE_uleb128);
    auto data_align = fields.value(DW_EH_PE_sleb128);
    std::optional<uint64_t> ra;
    if (*version == 1) {
        if (auto byte = fields.byte()) {
            ra = *byte;
        }
    } else {
        ra = fields.value(DW_EH_PE_uleb128);
    }
    if (!code_align || !data_align || !ra) {
        return false;
    }
    cie->code_align = *code_align;
    cie->data_align = static_cast<int64_t>(*data_align);
    cie->return_register = *ra;
    const uint8_t* instructions = fields.position();
    if (augmentation[0] == 'z') {
        cie->augmentation_data = true;
        auto size = fields.value(DW_EH_PE_uleb128);
        if (!size || *size > static_cast<uint64_t>(format->end - fields.position())) {
            return false;
        }
        instructions = fields.position() + *size;
        for (const char* c = augmentation + 1; *c != '\0'; ++c) {
            if (*c == 'R') {
                auto encoding = fields.byte();
                if (!encoding) {
                    return false;
                }
                cie->fde_encoding = *encoding;
            } else if (*c == 'L') {
                if (!fields.byte()) {
                    return false;
                }
            } else if (*c == 'P') {
                auto encoding = fields.byte();
                if (!encoding || !fields.value(*encoding)) {
                    return false;
                }
            } else if (*c == 'S') {
                cie->signal_frame = true;
            } else {
                return false;
            }
        }
    } else if (augmentation[0] != '\0') {
        return false;
    }
    cie->instructions = instructions;
    cie->end = format->end;
    return true;
}

// The FDE that covers `pc` (runtime), through the object's .eh_frame_hdr search table.
bool find_fde(uint64_t pc, Fde* fde) {
    dl_find_object object;
    if (_dl_find_object(reinterpret_cast<void*>(pc), &object) != 0 ||
        object.dlfo_eh_frame == nullptr) {
        return false;
    }
    const auto* hdr = static_cast<const uint8_t*>(object.dlfo_eh_frame);
    const auto* limit = static_cast<const uint8_t*>(object.dlfo_map_end);
    uint64_t hdr_address = reinterpret_cast<uint64_t>(hdr);
    if (hdr + 4 > limit || hdr[0] != 1) {
        return false;
    }
    uint8_t table_encoding = hdr[3];
    Encoded fields(hdr + 4, limit, false, 8);
    uint64_t eh_frame = 0;
    uint64_t count = 0;
    size_t entry = eh_frame::fixed_size(table_encoding) * 2;
    if (!read_encoded(fields, hdr[1], hdr_address, &eh_frame) ||
        !read_encoded(fields, hdr[2], hdr_address, &count) || entry == 0 || count == 0 ||
        count > static_cast<uint64_t>(limit - fields.position()) / entry) {
        return false;
    }
    // The last entry whose first pc is at or before `pc`: read directly in the encoding
    // linkers write (4-byte offsets from .eh_frame_hdr), through Encoded otherwise.
    const uint8_t* table = fields.position();
    uint64_t low = 0;
    uint64_t high = count;
    constexpr uint8_t linkers_encoding = DW_EH_PE_datarel | DW_EH_PE_sdata4;
    while (high - low > 1) {
        uint64_t middle = low + (high - low) / 2;
        uint64_t start = 0;
        if (table_encoding == linkers_encoding) {
            int32_t offset;
            std::memcpy(&offset, table + middle * entry, sizeof(offset));
            start = hdr_address + static_cast<uint64_t>(static_cast<int64_t>(offset));
        } else {
            Encoded at(table + middle * entry, limit, false, 8);
            if (!read_encoded(at, table_encoding, hdr_address, &start)) {
                return false;
            }
        }
        (start <= pc ? low : high) = middle;
    }
    Encoded at(table + low * entry, limit, false, 8);
    uint64_t start = 0;
    uint64_t address = 0;
    if (!read_encoded(at, table_encoding, hdr_address, &start) ||
        !read_encoded(at, table_encoding, hdr_address, &address) || start > pc) {
        return false;
    }
    const auto* entry_at = reinterpret_cast<const uint8_t*>(address);
    if (entry_at < static_cast<const uint8_t*>(object.dlfo_map_start) || entry_at >= limit) {
        return false;
    }
    Encoded header(entry_at, limit, false, 8);
    auto format = eh_frame::entry_format(header, limit);
    if (!format || format->offset_size != 4 || format->end < header.position()) {
        return false;
    }
    Encoded body(header.position(), format->end, false, 8); // every field within the entry
    const uint8_t* pointer_field = body.position();
    auto cie_offset = body.value(DW_EH_PE_udata4);
    if (!cie_offset || *cie_offset == 0 ||
        *cie_offset > static_cast<uint64_t>(pointer_field -
                                            static_cast<const uint8_t*>(object.dlfo_map_start)) ||
        !read_cie(pointer_field - *cie_offset, limit, &fde->cie)) {
        return false;
    }
    if (!read_encoded(body, fde->cie.fde_encoding, hdr_address, &fde->pc_begin)) {
        return false;
    }
    auto range = body.value(fde->cie.fde_encoding & 0x0f);
    if (!range || pc < fde->pc_begin || pc - fde->pc_begin >= *range) {
        return false;
    }
    fde->instructions = body.position();
    if (fde->cie.augmentation_data) {
        auto size = body.value(DW_EH_PE_uleb128);
        if (!size || *size > static_cast<uint64_t>(format->end - body.position())) {
            return false;
        }
        fde->instructions = body.position() + *size;
    }
    fde->end = format->end;
    return true;
}

// DW_CFA_expression's value: saved at DW_OP_breg<N> OFFSET (what GCC writes), else not
// evaluated: unknown.
RegisterRule register_offset_rule(const uint8_t* p, uint64_t size) {
    if (size < 2 || *p < DW_OP_breg0 || *p > DW_OP_breg15) {
        return {Rule::undefined, 0, 0};
    }
    Encoded operand(p + 1, p + size, false, 8);
    auto offset = operand.value(DW_EH_PE_sleb128);
    if (!offset || operand.position() != p + size) {
        return {Rule::undefined, 0, 0};
    }
    return {Rule::at_register, static_cast<uint8_t>(*p - DW_OP_breg0),
            static_cast<int64_t>(*offset)};
}

bool valid_register(uint64_t number) {
    return number < register_count;
}

// Runs call frame instructions from `p` to `end` into `row`, stopping before the first
// row past `target` (a pc); `initial` is the CIE's row (DW_CFA_restore). False for an
// instruction this walk does not read.
bool run_instructions(const uint8_t* p, const uint8_t* end, const Cie& cie, uint64_t location,
                      uint64_t target, const Row& initial, Row& row) {
    Row remembered[most_remembered];
    int depth = 0;
    Encoded in(p, end, false, 8);
    while (in.position() < end) {
        uint8_t op = *in.byte();
        uint8_t low = op & 0x3f;
        uint64_t delta = 0;
        std::optional<uint64_t> a;
        std::optional<uint64_t> b;
        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            delta = low * cie.code_align;
            break;
        case DW_CFA_offset:
            a = in.value(DW_EH_PE_uleb128);
            if (!a || !valid_register(low)) {
                return false;
            }
            row.rules[low] = {Rule::offset, 0, static_cast<int64_t>(*a) * cie.data_align};
            continue;
        case DW_CFA_restore:
            if (!valid_register(low)) {
                return false;
            }
            row.rules[low] = initial.rules[low];
            continue;
        default:
            break;
        }
        if ((op & 0xc0) == 0) {
            switch (op) {
            case DW_CFA_nop:
                continue;
            case DW_CFA_set_loc: {
                uint64_t to = 0;
                if (!read_encoded(in, cie.fde_encoding, 0, &to) || to < location) {
                    return false;
                }
                delta = to - location;
                break;
            }
            case DW_CFA_advance_loc1:
                if (auto one = in.byte()) {
                    a = *one;
                }
                [[fallthrough]];
            case DW_CFA_advance_loc2:
            case DW_CFA_advance_loc4:
                if (op != DW_CFA_advance_loc1) {
                    a = in.value(op == DW_CFA_advance_loc2 ? DW_EH_PE_udata2 : DW_EH_PE_udata4);
                }
                if (!a) {
                    return false;
                }
                delta = *a * cie.code_align;
                break;
            case DW_CFA_offset_extended:
            case DW_CFA_offset_extended_sf:
            case DW_CFA_val_offset:
            case DW_CFA_val_offset_sf:
            case DW_CFA_GNU_negative_offset_extended: {
                a = in.value(DW_EH_PE_uleb128);
                bool is_signed = op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf;
                b = in.value(is_signed ? DW_EH_PE_sleb128 : DW_EH_PE_uleb128);
                if (!a || !b || !valid_register(*a)) {
                    return false;
                }
                int64_t offset = static_cast<int64_t>(*b) * cie.data_align;
                if (op == DW_CFA_GNU_negative_offset_extended) {
                    offset = -offset;
                }
                bool value = op == DW_CFA_val_offset || op == DW_CFA_val_offset_sf;
                row.rules[*a] = {value ? Rule::val_offset : Rule::offset, 0, offset};
                continue;
            }
            case DW_CFA_restore_extended:
            case DW_CFA_undefined:
            case DW_CFA_same_value:
                a = in.value(DW_EH_PE_uleb128);
                if (!a || !valid_register(*a)) {
                    return false;
                }
                row.rules[*a] = op == DW_CFA_restore_extended ? initial.rules[*a]
                                : op == DW_CFA_undefined      ? RegisterRule{Rule::undefined, 0, 0}
                                                              : RegisterRule{Rule::same, 0, 0};
                continue;
            case DW_CFA_register:
                a = in.value(DW_EH_PE_uleb128);
                b = in.value(DW_EH_PE_uleb128);
                if (!a || !b || !valid_register(*a) || !valid_register(*b)) {
                    return false;
                }
                row.rules[*a] = {Rule::copy, 0, static_cast<int64_t>(*b)};
                continue;
            case DW_CFA_remember_state:
                if (depth == most_remembered) {
                    return false;
                }
                remembered[depth++] = row;
                continue;
            case DW_CFA_restore_state:
                if (depth == 0) {
                    return false;
                }
                row = remembered[--depth];
                continue;
            case DW_CFA_def_cfa:
            case DW_CFA_def_cfa_sf:
                a = in.value(DW_EH_PE_uleb128);
                b = in.value(op == DW_CFA_def_cfa_sf ? DW_EH_PE_sleb128 : DW_EH_PE_uleb128);
                if (!a || !b || !valid_register(*a)) {
                    return false;
                }
                row.cfa_register = static_cast<int>(*a);
                row.cfa_offset = op == DW_CFA_def_cfa_sf ? static_cast<int64_t>(*b) * cie.data_align
                                                         : static_cast<int64_t>(*b);
                row.cfa_expression = false;
                continue;
            case DW_CFA_def_cfa_register:
                a = in.value(DW_EH_PE_uleb128);
                if (!a || !valid_register(*a)) {
                    return false;
                }
                row.cfa_register = static_cast<int>(*a);
                continue;
            case DW_CFA_def_cfa_offset:
            case DW_CFA_def_cfa_offset_sf:
                a = in.value(op == DW_CFA_def_cfa_offset ? DW_EH_PE_uleb128 : DW_EH_PE_sleb128);
                if (!a) {
                    return false;
                }
                row.cfa_offset = op == DW_CFA_def_cfa_offset
                                     ? static_cast<int64_t>(*a)
                                     : static_cast<int64_t>(*a) * cie.data_align;
                continue;
            case DW_CFA_def_cfa_expression:
            case DW_CFA_expression:
            case DW_CFA_val_expression: {
                if (op != DW_CFA_def_cfa_expression) {
                    a = in.value(DW_EH_PE_uleb128);
                    if (!a || !valid_register(*a)) {
                        return false;
                    }
                }
                b = in.value(DW_EH_PE_uleb128);
                if (!b || *b > static_cast<uint64_t>(end - in.position())) {
                    return false;
                }
                if (op != DW_CFA_def_cfa_expression) {
                    row.rules[*a] = op == DW_CFA_expression
                                        ? register_offset_rule(in.position(), *b)
                                        : RegisterRule{Rule::undefined, 0, 0};
                }
                if (op == DW_CFA_def_cfa_expression) {
                    row.cfa_expression = true;
                    row.cfa_expression_bytes = in.position();
                    row.cfa_expression_size = *b;
                }
                in = Encoded(in.position() + *b, end, false, 8);
                continue;
            }
            case DW_CFA_GNU_args_size:
                if (!in.value(DW_EH_PE_uleb128)) {
                    return false;
                }
                continue;
            default:
                return false;
            }
        }
        if (location + delta > target) {
            return true; // the row at `location` covers the target
        }
        location += delta;
    }
    return true;
}

// True when `at` can be read as a saved value: 8 bytes, aligned, on this stack.
bool on_stack(uint64_t at, uint64_t stack_low) {
    return at >= stack_low && at - stack_low <= most_stack && (at & 7) == 0;
}

// The CFA of a row whose CFA is the expression GCC writes for a realigned stack (DRAP):
// DW_OP_breg<N> OFFSET; DW_OP_deref, read from the frame. False for any other expression.
bool saved_cfa(const Row& row, const Registers& registers, uint64_t stack_low, uint64_t* cfa) {
    const uint8_t* p = row.cfa_expression_bytes;
    const uint8_t* end = p + row.cfa_expression_size;
    if (row.cfa_expression_size < 3 || *p < DW_OP_breg0 || *p > DW_OP_breg15) {
        return false;
    }
    int base = *p - DW_OP_breg0;
    Encoded operand(p + 1, end, false, 8);
    auto offset = operand.value(DW_EH_PE_sleb128);
    if (!offset || operand.position() + 1 != end || *operand.position() != DW_OP_deref ||
        !registers.known[base]) {
        return false;
    }
    uint64_t at = registers.value[base] + *offset;
    if (!on_stack(at, stack_low)) {
        return false;
    }
    std::memcpy(cfa, reinterpret_cast<const void*>(at), 8);
    return true;
}

// One step: the caller's registers from this frame's, for the frame at `pc` (to look up:
// a return address minus one). False where the walk ends.
bool step(Registers& registers, uint64_t lookup, uint64_t stack_low, bool* signal_frame) {
    Fde fde;
    if (!find_fde(lookup, &fde) || fde.cie.return_register != return_address) {
        return false;
    }
    Row initial{}; // every register's rule "same", until the CIE says otherwise
    initial.cfa_register = rsp;
    initial.cfa_offset = 8;
    if (!run_instructions(fde.cie.instructions, fde.cie.end, fde.cie, fde.pc_begin, UINT64_MAX,
                          initial, initial)) {
        return false;
    }
    Row row = initial;
    if (!run_instructions(fde.instructions, fde.end, fde.cie, fde.pc_begin, lookup, initial, row)) {
        return false;
    }
    uint64_t cfa = 0;
    if (row.cfa_expression ? !saved_cfa(row, registers, stack_low, &cfa)
                           : !registers.known[row.cfa_register]) {
        return false;
    }
    if (!row.cfa_expression) {
        cfa = registers.value[row.cfa_register] + static_cast<uint64_t>(row.cfa_offset);
    }
    if (cfa <= registers.value[rsp] || cfa - stack_low > most_stack) {
        return false; // a stack grows down: the caller's frame lies above
    }
    Registers caller = registers;
    for (int r = 0; r < register_count; ++r) {
        const RegisterRule& rule = row.rules[r];
        switch (rule.rule) {
        case Rule::same:
            break;
        case Rule::undefined:
            caller.known[r] = false;
            break;
        case Rule::offset: {
            uint64_t at = cfa + static_cast<uint64_t>(rule.operand);
            if (!on_stack(at, stack_low)) {
                return false;
            }
            std::memcpy(&caller.value[r], reinterpret_cast<const void*>(at), 8);
            caller.known[r] = true;
            break;
        }
        case Rule::at_register: {
            if (!registers.known[rule.base]) {
                return false;
            }
            uint64_t at = registers.value[rule.base] + static_cast<uint64_t>(rule.operand);
            if (!on_stack(at, stack_low)) {
                return false;
            }
            std::memcpy(&caller.value[r], reinterpret_cast<const void*>(at), 8);
            caller.known[r] = true;
            break;
        }
        case Rule::val_offset:
            caller.value[r] = cfa + static_cast<uint64_t>(rule.operand);
            caller.known[r] = true;
            break;
        case Rule::copy:
            caller.value[r] = registers.value[rule.operand];
            caller.known[r] = registers.known[rule.operand];
            break;
        }
    }
    caller.value[rsp] = cfa;
    caller.known[rsp] = true;
    *signal_frame = fde.cie.signal_frame;
    registers = caller;
    return caller.known[return_address] && caller.value[return_address] != 0;
}

} // namespace

bool cfi_unwinder_available() {
    return true;
}

__attribute__((noinline)) unsigned unwind_this_stack(void** frames, unsigned capacity,
                                                     uintptr_t skip_start, uintptr_t skip_end) {
    Registers registers{};
    uint64_t pc = 0;
    // The state at this point: the pc, the stack pointer and the callee-saved registers
    // (what call frame information may name a CFA or a saved register by).
    asm volatile("leaq 0(%%rip), %0\n\t"
                 "movq %%rsp, %1\n\t"
                 "movq %%rbp, %2\n\t"
                 "movq %%rbx, %3\n\t"
                 "movq %%r12, %4\n\t"
                 "movq %%r13, %5\n\t"
                 "movq %%r14, %6\n\t"
                 "movq %%r15, %7\n\t"
                 : "=r"(pc), "=m"(registers.value[rsp]), "=m"(registers.value[rbp]),
                   "=m"(registers.value[3]), "=m"(registers.value[12]), "=m"(registers.value[13]),
                   "=m"(registers.value[14]), "=m"(registers.value[15]));
    for (int r : {rsp, rbp, 3, 12, 13, 14, 15}) {
        registers.known[r] = true;
    }
    uint64_t stack_low = registers.value[rsp];
    unsigned count = 0;
    uint64_t lookup = pc; // this frame's pc is exact; a caller's is a return address
    for (unsigned steps = 0; count < capacity && steps < capacity + 64; ++steps) {
        bool signal_frame = false;
        if (!step(registers, lookup, stack_low, &signal_frame)) {
            break;
        }
        uint64_t address = registers.value[return_address];
        lookup = signal_frame ? address : address - 1;
        if (address - 1 >= skip_start && address - 1 < skip_end) {
            continue;
        }
        frames[count++] = reinterpret_cast<void*>(address);
        dl_find_object found;
        if (_dl_find_object(reinterpret_cast<void*>(lookup), &found) != 0) {
            break; // JIT code, or no code: its unwind information is not ours to read
        }
    }
    return count;
}

#else

bool cfi_unwinder_available() {
    return false;
}

unsigned unwind_this_stack(void**, unsigned, uintptr_t, uintptr_t) {
    return 0;
}

#endif

} // namespace heapkit::agent
