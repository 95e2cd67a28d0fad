// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/symbolize.hpp"

#include "heapkit/symbolize/debug_files/debug_search.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/elf/later_builds.hpp"
#include "heapkit/symbolize/index/cache_directory.hpp"
#include "heapkit/symbolize/index/index_store.hpp"
#include "heapkit/symbolize/kept_symbols.hpp"
#include "heapkit/symbolize/module_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>

namespace heapkit {
namespace {

bool is_pseudo_path(const std::string& path) {
    return path.empty() || path.front() == '[';
}

// Each file is opened once however many dumps and mappings name it, and each warning
// is given once. With `kept`, files come from (and stay in) what a long-running process
// keeps; each is asked for once per call, so a file replaced on disk meanwhile does not
// pull an opened one from under this call.
class CallFiles {
public:
    CallFiles(const DebugSearch& search, SymbolizeReport& report, KeptSymbols* kept)
        : m_search(search)
        , m_report(report)
        , m_in_memory(kept) {}

    // The file at `path`, or why it cannot be opened.
    const OpenedFile& open(const std::string& path) {
        auto [it, inserted] = m_modules.try_emplace(path, nullptr);
        if (inserted) {
            it->second = m_in_memory != nullptr ? &m_in_memory->open(path) : &open_here(path);
            int why = it->second->error.system_error;
            if (why == EMFILE || why == ENFILE) {
                m_report.out_of_descriptors = it->second->error.message;
            }
        }
        return *it->second;
    }

    // The file at `path` if it can be opened.
    const ElfModule* find(const std::string& path) { return open(path).file.get(); }

    void warn(std::string message) {
        if (m_warned.insert(message).second) {
            m_report.warnings.push_back(std::move(message));
        }
    }

private:
    const OpenedFile& open_here(const std::string& path) {
        OpenedFile& opened = m_owned[path];
        auto file = ElfModule::open(path, m_search);
        if (file) {
            opened.file = std::move(*file);
        } else {
            opened.error = file.error();
        }
        return opened;
    }

    const DebugSearch& m_search;
    SymbolizeReport& m_report;
    KeptSymbols* m_in_memory;
    std::map<std::string, const OpenedFile*> m_modules; // this call's files
    std::map<std::string, OpenedFile> m_owned;          // without `kept`: opened here
    std::set<std::string> m_warned;
};

// Whether a pprof's mapping names a build id (Module::build_id before the file is
// opened; a dump names none) and the file has another: then the file is not the build
// the profile saw, whatever its layout. Ids that are not hex (a Go build id) are not
// compared.
bool names_other_build(const Module& module, const ElfModule& file) {
    const std::string& wanted = module.build_id;
    bool hex = !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
    return hex && !file.build_id().empty() &&
           !std::equal(
               wanted.begin(), wanted.end(), file.build_id().begin(), file.build_id().end(),
               [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// The opened file for module `module` (whose mapping, continued, is `extent`), or null
// when it cannot be used for names.
const ElfModule* open_module(const Module& module, const Module& extent,
                             const SymbolizeOptions& options, CallFiles& cache,
                             ModuleNotes& notes) {
    std::string path = locate_file(module, options);
    const OpenedFile& opened = cache.open(path);
    if (!opened.file) {
        notes.problem = FileProblem::missing;
        notes.problem_text = opened.error.message;
        return nullptr;
    }
    if (!opened.file->fits_mapping(extent)) {
        notes.problem = FileProblem::other_build;
        notes.problem_text =
            fmt::format("{}: its layout does not fit the mapping {:x}-{:x} at offset "
                        "{:x} in the dump (another build)",
                        path, module.start, module.limit, module.file_offset);
        return nullptr;
    }
    if (names_other_build(module, *opened.file)) {
        notes.problem = FileProblem::other_build;
        notes.problem_text = fmt::format("{}: its build id is {}, the profile's mapping names "
                                         "build {} (another build)",
                                         path, opened.file->build_id(), module.build_id);
        return nullptr;
    }
    auto at_dump_path = [&]() { return path == module.path ? nullptr : cache.find(module.path); };
    if (auto doubt = doubt_build(module, path, *opened.file, at_dump_path)) {
        if (doubt->certain || options.refuse_later_builds) {
            notes.problem = FileProblem::other_build;
            notes.problem_text =
                doubt->certain ? doubt->text : later_build_problem(path, *opened.file);
            return nullptr;
        }
        cache.warn(doubt->text);
    }
    if (module.deleted) {
        notes.remark = fmt::format("{} was deleted after the process mapped it; using the file "
                                   "now at {}",
                                   module.path, path);
    }
    return opened.file.get();
}

// Tells each module's remark when some stack runs through it. (Problems are told in the
// summary of what stayed unnamed, only where something did.)
void tell_remarks(const std::vector<ModuleNotes>& notes, const std::vector<bool>& used,
                  CallFiles& cache) {
    for (size_t i = 0; i < notes.size(); ++i) {
        if (!notes[i].remark.empty() && used[i]) {
            cache.warn(notes[i].remark);
        }
    }
}

// A file found elsewhere than the dump's path (the main binary given, a path map, a
// sysroot) while the dump's path holds another build that fits the mapping too: either
// may be what the process ran, and only the user can tell which.
// Only for modules some stack runs through (`used`).
void warn_other_builds(const Profile& profile, const std::vector<const ElfModule*>& files,
                       const std::vector<Module>& extents, const std::vector<bool>& used,
                       const SymbolizeOptions& options, CallFiles& cache) {
    for (size_t i = 0; i < files.size(); ++i) {
        const Module& module = profile.modules[i];
        std::string path = locate_file(module, options);
        if (!used[i] || files[i] == nullptr || files[i]->build_id().empty() ||
            path == module.path) {
            continue;
        }
        const ElfModule* there = cache.find(module.path);
        if (there != nullptr && !there->build_id().empty() &&
            there->build_id() != files[i]->build_id() && there->fits_mapping(extents[i])) {
            cache.warn(fmt::format("{} is used for {} (build id {}), but {} holds another build "
                                   "(build id {}): if the process ran that one, these names "
                                   "are wrong",
                                   path, module.path, files[i]->build_id(), module.path,
                                   there->build_id()));
        }
    }
}

// One process runs code of one architecture: the main executable's (else the first
// file's). A file for another machine is a wrong file found at the dump's path.
void drop_foreign_architectures(const Profile& profile, std::vector<const ElfModule*>& files,
                                std::vector<ModuleNotes>& notes) {
    const ElfModule* reference = nullptr;
    for (size_t i = 0; i < files.size() && reference == nullptr; ++i) {
        if (files[i] != nullptr && profile.modules[i].is_main) {
            reference = files[i];
        }
    }
    for (size_t i = 0; i < files.size() && reference == nullptr; ++i) {
        reference = files[i];
    }
    for (size_t i = 0; i < files.size(); ++i) {
        if (files[i] != nullptr && files[i]->machine() != reference->machine()) {
            notes[i].problem = FileProblem::other_architecture;
            notes[i].problem_text =
                fmt::format("{}: built for another architecture (ELF machine {}, "
                            "the program's is {})",
                            profile.modules[i].path, files[i]->machine(), reference->machine());
            files[i] = nullptr;
        }
    }
}

// Location indexes ordered by module, then address: each module's lookups run together
// and in address order, which keeps libdw's caches warm. Sorted as (module, address,
// index) held side by side: a sort of indexes that looked each location up at every
// comparison was a fifth of an all-unique dump's run (25 M locations, a cache miss each).
std::vector<uint32_t> lookup_order(const Profile& profile) {
    struct Key {
        uint64_t address;
        uint32_t module;
        uint32_t location;
        bool operator<(const Key& other) const {
            return std::tie(module, address, location) <
                   std::tie(other.module, other.address, other.location);
        }
    };
    std::vector<Key> keys(profile.locations.size());
    for (uint32_t l = 0; l < keys.size(); ++l) {
        keys[l] = {profile.locations[l].address, profile.locations[l].module, l};
    }
    std::sort(keys.begin(), keys.end());
    std::vector<uint32_t> order(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        order[i] = keys[i].location;
    }
    return order;
}

class Progress {
public:
    Progress(bool enabled, size_t total)
        : m_enabled(enabled && total >= 1000)
        , m_total(total) {}
    ~Progress() {
        if (m_enabled) {
            fmt::print(stderr, "\r\033[K");
        }
    }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    void step(size_t done) {
        if (m_enabled && done % 1000 == 0) {
            fmt::print(stderr, "\rsymbolizing: {}/{} addresses", done, m_total);
        }
    }

private:
    bool m_enabled;
    size_t m_total;
};

// True when `prefix` names `path` or a directory above it: whole components only, so
// that /a/s is no prefix of /a/src/b.
bool is_path_prefix(std::string_view prefix, std::string_view path) {
    if (!path.starts_with(prefix)) {
        return false;
    }
    return path.size() == prefix.size() || prefix.ends_with('/') || path[prefix.size()] == '/';
}

} // namespace

std::string locate_file(const Module& module, const SymbolizeOptions& options) {
    if (module.is_main && !options.main_binary.empty()) {
        return options.main_binary;
    }
    const PathRewrite* best = nullptr;
    for (const PathRewrite& rewrite : options.path_map) {
        if (is_path_prefix(rewrite.from, module.path) &&
            (best == nullptr || rewrite.from.size() > best->from.size())) {
            best = &rewrite;
        }
    }
    if (best != nullptr) {
        return best->to + module.path.substr(best->from.size());
    }
    return options.sysroot.empty() ? module.path : options.sysroot + module.path;
}

namespace {

// One symbolization: the files, what is known of each module, and the lookups' caches.
// symbolize() runs its passes in order.
class Session {
public:
    // `kept`: locked by the caller for the session's life, or null.
    Session(Profile& profile, const SymbolizeOptions& options, KeptSymbols* kept)
        : m_profile(profile)
        , m_options(options)
        , m_in_memory(kept)
        , m_search(debug_dirs_for(options.debug_dirs, options.sysroot))
        , m_call_files(m_search, m_report, kept)
        , m_files(profile.modules.size(), nullptr)
        , m_extents(mapped_extents(profile.modules))
        , m_notes(profile.modules.size())
        , m_used(profile.modules.size(), false)
        , m_frame_keys(profile.modules.size())
        , m_strings(*profile.strings)
        , m_indexes(options.names ? options.cache_directory : std::string()) {}

    // The modules some stack runs through: only their files are opened, searched for
    // DWARF (which can mean inflating whole compressed debug sections) and warned about.
    // A process maps many libraries its sampled stacks never reach.
    void find_used_modules() {
        for (const Location& location : m_profile.locations) {
            if (location.module != no_module) {
                m_used[location.module] = true;
            }
        }
    }

    // Each used file opened once; a file that cannot be what the process mapped is not
    // used. One process runs one architecture: a file for another is dropped.
    void open_files() {
        for (size_t i = 0; i < m_profile.modules.size(); ++i) {
            if (is_pseudo_path(m_profile.modules[i].path)) {
                m_notes[i].problem = FileProblem::not_a_file;
            } else if (m_used[i]) {
                m_files[i] = open_module(m_profile.modules[i], m_extents[i], m_options,
                                         m_call_files, m_notes[i]);
            }
        }
        drop_foreign_architectures(m_profile, m_files, m_notes);
        warn_other_builds(m_profile, m_files, m_extents, m_used, m_options, m_call_files);
    }

    // Build ids, jemalloc's own module, and what each module can tell (pprof's has_*),
    // for the modules whose files were opened: the used ones.
    void describe_modules() {
        std::vector<size_t> unindexed; // with an index builder: modules it must index
        for (size_t i = 0; i < m_profile.modules.size(); ++i) {
            Module& module = m_profile.modules[i];
            if (m_files[i] == nullptr) {
                continue;
            }
            module.build_id = m_files[i]->build_id();
            module.is_allocator = !module.is_main && m_files[i]->is_jemalloc();
            module.has_functions = m_options.names;
            std::optional<bool> dwarf = m_options.names ? known_dwarf(i) : false;
            if (!dwarf && m_options.index_builder && !module.build_id.empty()) {
                unindexed.push_back(i);
                continue;
            }
            // && order: no DWARF search unless names are wanted for this module.
            set_answers(i, dwarf ? *dwarf : m_files[i]->has_dwarf());
        }
        if (!unindexed.empty()) {
            index_elsewhere(unindexed);
        }
    }

    // The builds some stack runs through that have no address index yet: with
    // NewIndexes::now each gets it built here (side by side), and is named from it; with
    // NewIndexes::later their files are handed to `index_later` once named (finish()). A
    // build another process is indexing right now is left to it.
    void index_new_builds() {
        if (!m_indexes.enabled() || m_options.index_builder ||
            m_options.new_indexes == NewIndexes::none) {
            return;
        }
        std::vector<std::pair<std::string, const ElfModule*>> builds;
        std::vector<size_t> modules; // the module of each build, for its file's path
        for (size_t i = 0; i < m_profile.modules.size(); ++i) {
            const std::string& key = m_frame_keys[i];
            if (m_used[i] && m_files[i] != nullptr && !key.empty() && !m_indexed.contains(key) &&
                std::none_of(builds.begin(), builds.end(),
                             [&](const auto& build) { return build.first == key; })) {
                builds.emplace_back(key, m_files[i]);
                modules.push_back(i);
            }
        }
        if (m_options.new_indexes == NewIndexes::now) {
            m_indexes.build(builds);
            for (const auto& [key, file] : builds) {
                if (m_indexes.find(key, file->build_id()) != nullptr) {
                    m_indexed.insert(key);
                }
            }
        } else if (m_options.index_later) {
            for (size_t b = 0; b < builds.size(); ++b) {
                if (!m_indexes.busy(builds[b].first)) {
                    m_later.push_back(locate_file(m_profile.modules[modules[b]], m_options));
                }
            }
        }
    }

    // Every location's frames, module by module in address order, through the frame
    // cache where the module has DWARF.
    void name_locations() {
        // Without names nothing is looked up: any order does.
        std::vector<uint32_t> order(m_profile.locations.size());
        if (m_options.names) {
            order = lookup_order(m_profile);
        } else {
            std::iota(order.begin(), order.end(), 0);
        }
        Progress progress(m_options.progress, order.size());
        for (size_t done = 0; done < order.size(); ++done) {
            progress.step(done);
            name_location(m_profile.locations[order[done]]);
        }
    }

    // What stayed unnamed, per module, and the new builds handed over for their indexes.
    // Without names
    // nothing is unnamed by mishap: no summary, and no search for symbol tables and
    // DWARF (inflating compressed debug sections) to explain it.
    SymbolizeReport finish() {
        tell_remarks(m_notes, m_used, m_call_files);
        note_reopen_failures();
        if (m_options.names) {
            report_modules(m_profile, m_files, m_notes, m_report);
        }
        for (std::string& warning : m_indexes.take_warnings()) {
            m_report.warnings.push_back(std::move(warning));
        }
        for (std::string& warning : m_search.take_warnings()) {
            m_report.warnings.push_back(std::move(warning));
        }
        if (!m_later.empty()) {
            for (std::string& problem : m_options.index_later(m_later)) {
                m_report.warnings.push_back(std::move(problem));
            }
        }
        if (m_indexes.enabled() && !m_options.index_builder) {
            remove_retired_caches(m_options.cache_directory);
        }
        return std::move(m_report);
    }

private:
    // A kept file closed between calls (the runtime's, named from indexes) is opened
    // again when a lookup needs it; out of descriptors, that failure is the process's:
    // said as the first open's would be, not left as frames without names.
    void note_reopen_failures() {
        for (const ElfModule* file : m_files) {
            int why = file != nullptr ? file->reopen_error() : 0;
            if ((why == EMFILE || why == ENFILE) && !m_report.out_of_descriptors) {
                m_report.out_of_descriptors =
                    fmt::format("{}: cannot open again: {}", file->path(), std::strerror(why));
            }
        }
    }

    // Whether module `i`'s answers come from DWARF, as far as the indexes tell without
    // looking for its DWARF: an indexed build had DWARF when it was indexed. Asking the
    // file (has_dwarf()) can mean inflating its debug sections. With an index builder,
    // a symbols-only index says "none" too: the file is not opened for DWARF at all.
    // Without one, a debug file installed since is looked for, and then used.
    std::optional<bool> known_dwarf(size_t i) {
        const std::string& build_id = m_profile.modules[i].build_id;
        if (m_indexes.has(build_id, build_id)) {
            return true;
        }
        if (m_options.index_builder && m_indexes.has(cache_key(build_id, false), build_id)) {
            return false;
        }
        return std::nullopt;
    }

    // Module `i`'s answers come from DWARF (or symbol tables alone): what it can tell,
    // and the key its index is kept under. Symbol-table answers are indexed too: building
    // a stripped module's symbol index (sorting thousands of exports) cost more than the
    // rest of a warm run. An indexed module is named by lookups.
    void set_answers(size_t i, bool dwarf) {
        Module& module = m_profile.modules[i];
        module.has_filenames = module.has_line_numbers = module.has_inline_frames = dwarf;
        if (m_options.names && !module.build_id.empty()) {
            m_frame_keys[i] = cache_key(module.build_id, dwarf);
            if (m_indexes.has(m_frame_keys[i], module.build_id)) {
                m_indexed.insert(m_frame_keys[i]);
            }
        }
    }

    // Has the builder index modules `modules` (their files, once each) in one go, then
    // names each from its new index, or from its file where none came.
    void index_elsewhere(const std::vector<size_t>& modules) {
        std::vector<std::string> paths;
        for (size_t i : modules) {
            std::string path = locate_file(m_profile.modules[i], m_options);
            if (std::find(paths.begin(), paths.end(), path) == paths.end()) {
                paths.push_back(std::move(path));
            }
        }
        for (std::string& problem : m_options.index_builder(paths)) {
            m_call_files.warn(std::move(problem));
        }
        for (size_t i : modules) {
            const std::string& build_id = m_profile.modules[i].build_id;
            m_indexes.look_again(build_id);
            m_indexes.look_again(cache_key(build_id, false));
            std::optional<bool> dwarf = known_dwarf(i);
            set_answers(i, dwarf ? *dwarf : m_files[i]->has_dwarf());
        }
    }

    // The frames at `vaddr` of `file`: from the build's address index, else kept from an
    // earlier call, else from the file (and kept).
    std::vector<Frame> lookup(const ElfModule& file, uint64_t vaddr, const std::string& key) {
        if (key.empty()) {
            return file.frames_at(vaddr, m_strings);
        }
        if (m_indexed.contains(key)) {
            if (m_in_memory != nullptr) {
                m_in_memory->count_indexed_lookup();
            }
            return from_index_or_file(file, vaddr, key); // a lookup: nothing worth keeping
        }
        if (m_in_memory != nullptr) {
            if (auto hit = m_in_memory->find(key, vaddr)) {
                return interned(*hit);
            }
        }
        std::vector<Frame> frames = file.frames_at(vaddr, m_strings);
        if (m_in_memory != nullptr) {
            m_in_memory->add(key, vaddr, frames);
        }
        return frames;
    }

    // `frames` with texts in the profile's pool (kept texts, mapped files' bytes).
    std::vector<Frame> interned(std::span<const Frame> frames) {
        std::vector<Frame> copy(frames.begin(), frames.end());
        for (Frame& frame : copy) {
            frame.name = m_strings.intern(frame.name);
            frame.system_name = m_strings.intern(frame.system_name);
            frame.file = m_strings.intern(frame.file);
        }
        return copy;
    }

    std::vector<Frame> from_index_or_file(const ElfModule& file, uint64_t vaddr,
                                          const std::string& key) {
        if (const AddressIndex* index = m_indexes.find(key, file.build_id())) {
            if (auto frames = index->frames_at(vaddr)) {
                return interned(*frames);
            }
            m_call_files.warn(fmt::format("{}: damaged address index; naming {} from its file",
                                          m_indexes.path_of(key), file.build_id()));
        }
        return file.frames_at(vaddr, m_strings);
    }

    void name_location(Location& location) {
        const ElfModule* file = location.module == no_module ? nullptr : m_files[location.module];
        // A pprof's producer named it: its names stay (Profile::named_types).
        bool named_by_producer = !m_profile.named_types.empty() && !location.frames.empty();
        if (named_by_producer) {
            if (location.module != no_module) {
                m_profile.modules[location.module].has_functions = true;
            }
        } else if (!m_options.names) {
            location.frames.clear();
        } else if (file != nullptr) {
            const Module& module = m_profile.modules[location.module];
            auto vaddr = file->vaddr_of_file_offset(module.file_offset_of(location.address));
            location.frames =
                vaddr ? lookup(*file, *vaddr, m_frame_keys[location.module]) : std::vector<Frame>{};
            if (location.frames.empty() && vaddr && !module.is_allocator) {
                name_by_function_start(location, *file, *vaddr);
            }
        } else if (!location.frames.empty() && location.module != no_module) {
            m_profile.modules[location.module].has_functions = true; // named by jeprof
        }
        // Stripped jemalloc internals are expected to be nameless; they are cut anyway.
        bool in_allocator =
            location.module != no_module && m_profile.modules[location.module].is_allocator;
        if ((location.frames.empty() || location.anonymous) && !in_allocator) {
            ++m_report.unnamed_locations;
        }
    }

    // An address no symbol or DWARF names, named after where its function starts (see
    // Location::anonymous). Not kept in memory: it is no name a debug file installed
    // later should be shadowed by.
    void name_by_function_start(Location& location, const ElfModule& file, uint64_t vaddr) {
        auto start = file.function_start(vaddr);
        if (!start) {
            return;
        }
        std::string_view path = m_profile.modules[location.module].path;
        std::string_view base = path.substr(path.rfind('/') + 1); // npos + 1 == 0
        std::string_view name = m_strings.intern(fmt::format("{}!0x{:x}", base, *start));
        location.frames = {Frame{name, name, {}, 0, 0, 0}};
        location.anonymous = true;
    }

    Profile& m_profile;
    const SymbolizeOptions& m_options;
    // Three caches, by how long what they hold lives: files and answers kept in memory
    // between calls (a long-running process's, or none), the files this call opened, and
    // every address's answer kept on disk between runs (the address indexes).
    KeptSymbols* m_in_memory;
    SymbolizeReport m_report;
    DebugSearch m_search; // outlives every ElfModule in m_call_files
    CallFiles m_call_files;
    std::vector<const ElfModule*> m_files; // per module; null: no usable file
    std::vector<Module> m_extents;         // per module: its mapping, continued
    std::vector<ModuleNotes> m_notes;
    std::vector<bool> m_used;              // some stack runs through the module
    std::vector<std::string> m_frame_keys; // its index's key; empty: none can be kept
    FrameStrings m_strings;
    IndexStore m_indexes;             // answers for every address, on disk
    std::set<std::string> m_indexed;  // keys named from their index
    std::vector<std::string> m_later; // files for NewIndexes::later's index_later
};

} // namespace

SymbolizeReport symbolize(Profile& profile, const SymbolizeOptions& options) {
    KeptSymbols* kept = options.kept && options.kept->fits(options) ? options.kept.get() : nullptr;
    std::unique_lock<std::mutex> turn;
    if (kept != nullptr) {
        turn = kept->lock();
        kept->trim();
    }
    Session session(profile, options, kept);
    session.find_used_modules();
    session.open_files();
    session.describe_modules();
    session.index_new_builds();
    session.name_locations();
    return session.finish();
}

} // namespace heapkit
