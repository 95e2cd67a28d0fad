// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/dwarf/dwarf_frames.hpp"

#include "heapkit/symbolize/dwarf/code_tree.hpp"
#include "heapkit/symbolize/dwarf/dwarf_scopes.hpp"
#include "heapkit/symbolize/dwarf/dwarf_tags.hpp"
#include "heapkit/symbolize/dwarf/unit_painting.hpp"

#include <algorithm>
#include <cstdlib>
#include <dwarf.h>
#include <map>
#include <memory>
#include <utility>

namespace heapkit {
namespace {

using Position = DwarfFrames::Position;

uint32_t unsigned_attribute(Dwarf_Die* die, unsigned int name) {
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (dwarf_attr_integrate(die, name, &attribute) == nullptr ||
        dwarf_formudata(&attribute, &value) != 0) {
        return 0;
    }
    return static_cast<uint32_t>(value);
}

const char* string_attribute(Dwarf_Die* die, unsigned int name) {
    Dwarf_Attribute attribute;
    if (dwarf_attr_integrate(die, name, &attribute) == nullptr) {
        return nullptr;
    }
    return dwarf_formstring(&attribute);
}

// Name of a subprogram or inlined subroutine: the linkage name (demangled for display)
// when there is one, as it carries the namespaces and arguments; else DW_AT_name
// qualified by the scopes around its declaration. Its file and line are left for the
// caller.
Frame describe_function(Dwarf_Die* die, FrameStrings& strings, DwarfScopes& scopes) {
    Frame frame;
    const char* linkage = string_attribute(die, DW_AT_linkage_name);
    if (linkage == nullptr) {
        linkage = string_attribute(die, DW_AT_MIPS_linkage_name);
    }
    if (linkage != nullptr) {
        frame.system_name = strings.intern(linkage);
        frame.name = strings.demangled(frame.system_name);
    } else if (std::string name = scopes.qualified_name(die); !name.empty()) {
        frame.name = frame.system_name = strings.intern(name);
    }
    int start_line = 0;
    if (dwarf_decl_line(die, &start_line) == 0 && start_line > 0) {
        frame.start_line = static_cast<uint32_t>(start_line);
    }
    return frame;
}

// Whether `die` carries what describe_function() reads (its names, its line) itself:
// one that does not is described as its abstract origin is, through
// dwarf_attr_integrate. An inlined function's instances (thousands of one `static inline`
// helper) then share one description. Read from the DIE's abbreviation alone.
bool names_itself(Dwarf_Die* die) {
    return dwarf_hasattr(die, DW_AT_linkage_name) != 0 ||
           dwarf_hasattr(die, DW_AT_MIPS_linkage_name) != 0 ||
           dwarf_hasattr(die, DW_AT_name) != 0 || dwarf_hasattr(die, DW_AT_decl_line) != 0;
}

bool abstract_origin(Dwarf_Die* die, Dwarf_Die* origin) {
    Dwarf_Attribute attribute;
    return dwarf_attr(die, DW_AT_abstract_origin, &attribute) != nullptr &&
           dwarf_formref_die(&attribute, origin) != nullptr;
}

Position line_table_position(Dwfl_Module* module, Dwarf_Addr address) {
    Position position;
    Dwfl_Line* line = dwfl_module_getsrc(module, address);
    if (line == nullptr) {
        return position;
    }
    int number = 0;
    int column = 0;
    position.file = dwfl_lineinfo(line, nullptr, &number, &column, nullptr, nullptr);
    position.line = number > 0 ? static_cast<uint32_t>(number) : 0;
    position.column = column > 0 ? static_cast<uint32_t>(column) : 0;
    return position;
}

// The caller of an inlined subroutine executes at the subroutine's call site.
// `file_name(index)`: the name of the unit's file `index`, or null.
template <typename FileName> Position call_site(Dwarf_Die* inlined, FileName&& file_name) {
    Position position;
    position.file = file_name(unsigned_attribute(inlined, DW_AT_call_file));
    position.line = unsigned_attribute(inlined, DW_AT_call_line);
    position.column = unsigned_attribute(inlined, DW_AT_call_column);
    return position;
}

bool is_function(Dwarf_Die* die) {
    return is_function_tag(dwarf_tag(die));
}

using ScopeArray = std::unique_ptr<Dwarf_Die, decltype(&std::free)>;

// Function-like DIEs of `scopes` from `first` on, up to and including the first that
// is not an inlined instance: the chain of callers.
std::vector<Dwarf_Die> chain_from(Dwarf_Die* scopes, int count, int first) {
    std::vector<Dwarf_Die> functions;
    for (int i = first; i < count; ++i) {
        if (!is_function(&scopes[i])) {
            continue; // lexical blocks, namespaces, the CU
        }
        functions.push_back(scopes[i]);
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) {
            break; // the function that holds the code: the chain is complete
        }
    }
    return functions;
}

bool is_container(Dwarf_Die* die) {
    return is_container_tag(dwarf_tag(die));
}

bool has_pc(Dwarf_Die* die, Dwarf_Addr pc) {
    return is_code_scope_tag(dwarf_tag(die)) && dwarf_haspc(die, pc) > 0;
}

// Depth-first from `parent` along the concrete DIEs whose ranges hold `pc`, appending
// every function-like one to `path` (outermost first). Of sibling DIEs that both hold
// `pc` (GCC emits overlapping lexical blocks: in LTO builds of CPython one block's second
// range covers a sibling block holding an inlined call), the one whose chain goes deepest
// wins, the first of them on a tie: the inlined frame llvm-symbolizer and addr2line show
// is not lost to a block that holds the address but no call. Bounded depth: corrupt
// DWARF can form cycles through imports.
bool descend(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& path, int depth) {
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0) {
        return false;
    }
    bool found = false;
    std::vector<Dwarf_Die> best;
    do {
        std::vector<Dwarf_Die> here;
        bool holds = false;
        Dwarf_Die target;
        if (has_pc(&child, pc)) {
            if (is_function(&child)) {
                here.push_back(child);
            }
            descend(&child, pc, here, depth + 1);
            holds = true;
        } else if (imported_unit(&child, &target)) {
            holds = descend(&target, pc, here, depth + 1);
        } else if (is_container(&child)) {
            holds = descend(&child, pc, here, depth + 1);
        }
        if (holds && (!found || here.size() > best.size())) {
            best = std::move(here);
            found = true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    path.insert(path.end(), best.begin(), best.end());
    return found;
}

// The function-like DIEs holding `address`, innermost first, for what the index does
// not cover: a walk over the CU's concrete DIEs, then dwarf_getscopes, which misses
// functions nested in namespaces in some producers' output (seen with rustc), and above
// an inlined instance lists the abstract definition's scopes, so the callers come from
// dwarf_getscopes_die where that works.
std::vector<Dwarf_Die> walked_chain(Dwarf_Die* cu, Dwarf_Addr cu_address) {
    std::vector<Dwarf_Die> path;
    descend(cu, cu_address, path, 0);
    if (!path.empty()) {
        return {path.rbegin(), path.rend()};
    }
    Dwarf_Die* raw = nullptr;
    int count = dwarf_getscopes(cu, cu_address, &raw);
    ScopeArray scopes(raw, &std::free);
    int innermost = 0;
    while (innermost < count && !is_function(&raw[innermost])) {
        ++innermost;
    }
    if (innermost >= count) {
        return {};
    }
    Dwarf_Die* concrete_raw = nullptr;
    int concrete_count = dwarf_getscopes_die(&raw[innermost], &concrete_raw);
    ScopeArray concrete(concrete_raw, &std::free);
    if (concrete_count > 0) {
        return chain_from(concrete_raw, concrete_count, 0);
    }
    return chain_from(raw, count, innermost);
}

// Appends the functions with code directly under `parent` (through namespaces, types
// and imported partial units, as descend() finds them), one entry per address range.
void collect_functions(Dwarf_Die* parent, std::vector<Dwarf_Die>& found, int depth) {
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0) {
        return;
    }
    do {
        int tag = dwarf_tag(&child);
        Dwarf_Die target;
        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
            found.push_back(child);
        } else if (imported_unit(&child, &target)) {
            collect_functions(&target, found, depth + 1);
        } else if (is_container(&child)) {
            collect_functions(&child, found, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

} // namespace

const DwarfFrames::UnitIndex& DwarfFrames::index_of(Dwarf_Die* cu) {
    auto [it, inserted] = m_units.try_emplace(dwarf_dieoffset(cu));
    if (!inserted) {
        return it->second;
    }
    UnitIndex& index = it->second;
    std::vector<Dwarf_Die> dies;
    collect_functions(cu, dies, 0);
    for (Dwarf_Die& die : dies) {
        for_each_range(&die, [&](Dwarf_Addr low, Dwarf_Addr high) {
            index.functions.push_back({low, high, die});
        });
    }
    std::stable_sort(index.functions.begin(), index.functions.end(),
                     [](const Function& a, const Function& b) { return a.low < b.low; });
    Dwarf_Addr reach = 0;
    for (const Function& function : index.functions) {
        reach = std::max(reach, function.high);
        index.reach.push_back(reach);
    }
    return index;
}

std::vector<Dwarf_Die> DwarfFrames::function_chain(Dwarf_Die* cu, Dwarf_Addr cu_address) {
    const UnitIndex& index = index_of(cu);
    auto above = std::upper_bound(
        index.functions.begin(), index.functions.end(), cu_address,
        [](Dwarf_Addr address, const Function& function) { return address < function.low; });
    // Down from the closest function below; none earlier than `reach` allows can hold it.
    for (auto i = static_cast<size_t>(above - index.functions.begin());
         i-- > 0 && index.reach[i] > cu_address;) {
        const Function& function = index.functions[i];
        if (cu_address < function.high) {
            Dwarf_Die top = function.die; // not path's own element: path grows
            std::vector<Dwarf_Die> path{top};
            descend(&top, cu_address, path, 1);
            return {path.rbegin(), path.rend()};
        }
    }
    return walked_chain(cu, cu_address);
}

Frame DwarfFrames::described(Dwarf_Die* die, FrameStrings& strings) {
    // Following DW_AT_abstract_origin to the names costs more than the rest of a
    // lookup, and the addresses of a profile fall in the same functions again and again.
    auto [it, inserted] = m_described.try_emplace(die->addr);
    if (inserted) {
        Frame& frame = it->second; // stays where it is while the map grows
        Dwarf_Die origin;
        frame = names_itself(die) || !abstract_origin(die, &origin)
                    ? describe_function(die, strings, m_scopes)
                    : described(&origin, strings);
    }
    return it->second;
}

UnitPainting& DwarfFrames::painting_of(Dwarf_Die* cu) {
    auto found = m_paintings.find(dwarf_dieoffset(cu));
    if (found != m_paintings.end()) {
        return found->second;
    }
    paint(cu, CodeTree(cu));
    return m_paintings.at(dwarf_dieoffset(cu));
}

void DwarfFrames::paint(Dwarf_Die* cu, const CodeTree& tree) {
    if (auto [it, inserted] = m_paintings.try_emplace(dwarf_dieoffset(cu)); inserted) {
        it->second = paint_unit(tree);
    }
}

LinePositions& DwarfFrames::line_positions() {
    if (!m_lines) {
        Dwarf_Addr bias = 0;
        m_lines = std::make_unique<LinePositions>(dwfl_module_getdwarf(m_module, &bias));
    }
    return *m_lines;
}

std::vector<Frame> DwarfFrames::frames_of(Dwarf_Die* cu, std::span<Dwarf_Die> chain,
                                          Dwarf_Addr address, Dwarf_Addr bias,
                                          FrameStrings& strings) {
    if (chain.empty()) {
        return {};
    }
    // Names and file names are kept as texts of `strings`' pool: a call with another
    // (a long-running process's next request) must not be handed the last one's.
    if (strings.serial() != m_strings_serial) {
        m_described.clear();
        m_file_names.clear();
        m_strings_serial = strings.serial();
    }
    Dwarf_Files* files = nullptr; // the unit's, read for the first call site not yet known
    size_t file_count = 0;
    bool files_read = false;
    const LinePositions::Unit* lines = m_lines ? m_lines->unit(cu) : nullptr;
    Position here;
    if (lines == nullptr) {
        here = line_table_position(m_module, address);
    } else if (!lines->at(address - bias, here)) {
        here = {};
    }
    std::vector<Frame> frames;
    frames.reserve(chain.size());
    for (Dwarf_Die& die : chain) {
        Frame frame = described(&die, strings);
        frame.file = file_name(here.file, strings);
        frame.line = here.line;
        frame.column = here.column;
        frames.push_back(frame);
        // The caller of an inlined instance executes at the instance's call site, read
        // once per instance: an index asks about every line of it.
        if (&die == &chain.back()) {
            break; // the function holding the code: no caller in this chain
        }
        auto [site, inserted] = m_call_sites.try_emplace(die.addr);
        if (inserted && lines != nullptr) {
            site->second = call_site(&die, [&](uint32_t file) { return lines->file(file); });
        } else if (inserted) {
            if (!std::exchange(files_read, true) &&
                dwarf_getsrcfiles(cu, &files, &file_count) != 0) {
                files = nullptr;
            }
            site->second = call_site(&die, [&](uint32_t file) {
                return files != nullptr && file < file_count
                           ? dwarf_filesrc(files, file, nullptr, nullptr)
                           : nullptr;
            });
        }
        here = site->second;
    }
    return frames;
}

std::string_view DwarfFrames::file_name(const char* file, FrameStrings& strings) {
    if (file == nullptr) {
        return {};
    }
    auto [it, inserted] = m_file_names.try_emplace(file);
    if (inserted) {
        it->second = strings.intern(file);
    }
    return it->second;
}

std::vector<Frame> DwarfFrames::at(Dwarf_Addr address, FrameStrings& strings) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(m_module, address, &bias); // borrowed from libdw
    if (cu == nullptr) {
        return {};
    }
    std::vector<Dwarf_Die> chain = function_chain(cu, address - bias);
    return frames_of(cu, chain, address, bias, strings);
}

std::vector<Frame> DwarfFrames::at_painted(Dwarf_Addr address, FrameStrings& strings) {
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = dwfl_module_addrdie(m_module, address, &bias); // borrowed from libdw
    if (cu == nullptr) {
        return {};
    }
    UnitPainting& painting = painting_of(cu);
    Dwarf_Addr cu_address = address - bias;
    auto above = std::upper_bound(
        painting.spans.begin(), painting.spans.end(), cu_address,
        [](Dwarf_Addr value, const UnitPainting::Span& span) { return value < span.low; });
    if (above == painting.spans.begin() || cu_address >= std::prev(above)->high) {
        return at(address, strings); // in no function of the index: walked_chain()
    }
    m_chain.clear();
    for (uint32_t i = 0; i < std::prev(above)->length; ++i) {
        m_chain.push_back(painting.dies[painting.chains[std::prev(above)->first + i]]);
    }
    return frames_of(cu, m_chain, address, bias, strings);
}

} // namespace heapkit
