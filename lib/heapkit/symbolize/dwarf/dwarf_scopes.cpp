// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/dwarf/dwarf_scopes.hpp"

#include <algorithm>
#include <cctype>
#include <dwarf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <string_view>

namespace heapkit {
namespace {

// Nesting deeper than this is corrupt DWARF (or a reference cycle), not C++.
constexpr int max_depth = 64;

bool is_scope(Dwarf_Die* die) {
    switch (dwarf_tag(die)) {
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_interface_type:
        return true;
    default:
        return false;
    }
}

// The DIE `attribute` of `die` refers to, if it has that attribute.
bool follow(Dwarf_Die* die, unsigned int attribute, Dwarf_Die* target) {
    Dwarf_Attribute reference;
    return dwarf_attr(die, attribute, &reference) != nullptr &&
           dwarf_formref_die(&reference, target) != nullptr;
}

// Where `die` is declared: through DW_AT_abstract_origin (an inlined or concrete
// instance to its abstract function) and DW_AT_specification (a definition outside its
// class or namespace to the declaration inside it).
Dwarf_Die declaration_of(Dwarf_Die die) {
    for (int i = 0; i < max_depth; ++i) {
        Dwarf_Die next;
        if (!follow(&die, DW_AT_abstract_origin, &next) &&
            !follow(&die, DW_AT_specification, &next)) {
            break;
        }
        die = next;
    }
    return die;
}

bool is_builtin_word(std::string_view word) {
    return word == "long" || word == "short" || word == "unsigned" || word == "signed" ||
           word == "int" || word == "char";
}

// One run of builtin type words as the demangler spells it: GCC writes template
// arguments its own way ("long unsigned int"), the demangler "unsigned long".
std::string builtin_type(const std::vector<std::string_view>& words) {
    int longs = 0;
    bool is_unsigned = false;
    bool is_short = false;
    for (std::string_view word : words) {
        if (word == "char") {
            return fmt::format("{}", fmt::join(words, " ")); // "unsigned char" as it is
        }
        longs += word == "long";
        is_unsigned = is_unsigned || word == "unsigned";
        is_short = is_short || word == "short";
    }
    std::string_view base = longs >= 2   ? "long long"
                            : longs == 1 ? "long"
                            : is_short   ? "short"
                                         : "int";
    return fmt::format("{}{}", is_unsigned ? "unsigned " : "", base);
}

// The identifier starting at `at` in `text` (empty when none does).
std::string_view word_at(std::string_view text, size_t at) {
    size_t end = at;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) {
        ++end;
    }
    return text.substr(at, end - at);
}

// `name` with the builtin types in its template arguments spelled as the demangler does,
// so that an inlined frame reads as the same function's symbol: "Pool<long int>" becomes
// "Pool<long>".
std::string demangler_spelling(std::string_view name) {
    if (name.find('<') == std::string_view::npos) {
        return std::string(name);
    }
    std::string out;
    size_t at = 0;
    while (at < name.size()) {
        std::string_view word = word_at(name, at);
        if (word.empty()) {
            out += name[at++];
            continue;
        }
        // A run of builtin words, one space apart: "long unsigned int".
        std::vector<std::string_view> run;
        for (size_t next = at; is_builtin_word(word);) {
            run.push_back(word);
            at = next + word.size();
            if (at + 1 >= name.size() || name[at] != ' ') {
                break;
            }
            next = at + 1;
            word = word_at(name, next);
        }
        if (run.empty()) {
            out += word;
            at += word.size();
        } else {
            out += builtin_type(run);
        }
    }
    return out;
}

// A scope's own name as the demangler prints it.
std::string scope_name(Dwarf_Die* die) {
    if (const char* name = dwarf_diename(die)) {
        return demangler_spelling(name);
    }
    switch (dwarf_tag(die)) {
    case DW_TAG_namespace:
        return "(anonymous namespace)";
    case DW_TAG_union_type:
        return "(anonymous union)";
    case DW_TAG_structure_type:
        return "(anonymous struct)";
    default:
        return "(anonymous class)";
    }
}

// C has no namespaces and declares no function inside a struct or union: no scope of a C
// unit holds a function's declaration, and finding its scopes walked all its top-level
// DIEs (most of a C module's naming cost).
bool is_c_unit(Dwarf_Die* unit) {
    switch (dwarf_srclang(unit)) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
        return true;
    default:
        return false;
    }
}

} // namespace

// Appends the scopes under `parent` (index `parent_index`) in DIE order. A scope ends
// where its next sibling starts; the last child's end stays 0, meaning its parent's end.
// Only scopes are entered: function bodies, which hold most DIEs, are skipped whole.
void DwarfScopes::index_children(Dwarf_Die* parent, int32_t parent_index, UnitScopes& unit,
                                 int depth) {
    Dwarf_Die child;
    if (depth > max_depth || dwarf_child(parent, &child) != 0) {
        return;
    }
    int32_t previous = -1; // the last scope found among these children
    do {
        if (previous >= 0 && unit.scopes[previous].end == 0) {
            unit.scopes[previous].end = dwarf_dieoffset(&child);
        }
        if (is_scope(&child)) {
            previous = static_cast<int32_t>(unit.scopes.size());
            unit.scopes.push_back({dwarf_dieoffset(&child), 0, parent_index, child, {}, false});
            index_children(&child, previous, unit, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

DwarfScopes::UnitScopes& DwarfScopes::unit_of(Dwarf_Die* die) {
    Dwarf_Die unit_die;
    if (dwarf_diecu(die, &unit_die, nullptr, nullptr) == nullptr) {
        static UnitScopes none; // never written: an empty index finds no scope
        return none;
    }
    auto [it, inserted] = m_units.try_emplace(unit_die.addr);
    if (inserted && !is_c_unit(&unit_die)) {
        UnitScopes& unit = it->second;
        index_children(&unit_die, -1, unit, 0);
        // Scopes that were the last of their siblings end where their parent ends;
        // parents come first, so theirs is known.
        for (Scope& scope : unit.scopes) {
            if (scope.end == 0) {
                scope.end = scope.parent < 0 ? std::numeric_limits<Dwarf_Off>::max()
                                             : unit.scopes[scope.parent].end;
            }
        }
    }
    return it->second;
}

int32_t DwarfScopes::enclosing(const UnitScopes& unit, Dwarf_Off offset) const {
    // The last scope starting before `offset`, else the scopes enclosing it.
    auto after = std::upper_bound(unit.scopes.begin(), unit.scopes.end(), offset,
                                  [](Dwarf_Off value, const Scope& s) { return value <= s.start; });
    auto index = static_cast<int32_t>(after - unit.scopes.begin()) - 1;
    while (index >= 0 && offset >= unit.scopes[index].end) {
        index = unit.scopes[index].parent;
    }
    return index;
}

const std::string& DwarfScopes::prefix_through(UnitScopes& unit, int32_t index, int depth) {
    Scope& scope = unit.scopes[index];
    if (!scope.has_prefix) {
        // A type defined outside its enclosing type ("struct Outer::Inner {...}") is
        // declared inside it: its scopes are the declaration's.
        Dwarf_Die declaration = declaration_of(scope.die);
        std::string outer = declaration.addr != scope.die.addr
                                ? prefix_around(&declaration, depth + 1)
                            : scope.parent < 0 ? std::string()
                                               : prefix_through(unit, scope.parent, depth + 1);
        scope.prefix = outer + scope_name(&scope.die) + "::";
        scope.has_prefix = true;
    }
    return scope.prefix;
}

std::string DwarfScopes::prefix_around(Dwarf_Die* die, int depth) {
    if (depth > max_depth) {
        return {};
    }
    UnitScopes& unit = unit_of(die);
    int32_t index = enclosing(unit, dwarf_dieoffset(die));
    return index < 0 ? std::string() : prefix_through(unit, index, depth);
}

std::string DwarfScopes::qualified_name(Dwarf_Die* die) {
    const char* name = dwarf_diename(die);
    if (name == nullptr) {
        return {};
    }
    Dwarf_Die declaration = declaration_of(*die);
    return prefix_around(&declaration, 0) + demangler_spelling(name);
}

} // namespace heapkit
