// SPDX-License-Identifier: MIT
// load_series (heapkit.hpp): dumps of one program, each loaded on its own (sharing the
// files opened), oldest first.
#include "heapkit/growth/series_order.hpp"
#include "heapkit/load/load.hpp"
#include "heapkit/util/try.hpp"

#include <filesystem>
#include <map>
#include <set>

namespace heapkit {
namespace {

constexpr size_t min_dumps = 3;

// Two names of one file (a relative and an absolute path, a symlink) are one dump.
std::string file_identity(const Input& input) {
    if (input.bytes || input.name == "-") {
        return {};
    }
    std::error_code failed;
    std::filesystem::path canonical = std::filesystem::weakly_canonical(input.name, failed);
    return failed ? input.name : canonical.string();
}

Result<void> check_inputs(std::span<const Input> inputs) {
    if (inputs.size() < min_dumps) {
        return fail("growth needs at least {} dumps of one program, taken one after another; {} "
                    "given",
                    min_dumps, inputs.size());
    }
    std::map<std::string, const Input*> seen;
    for (const Input& input : inputs) {
        std::string identity = file_identity(input);
        if (identity.empty()) {
            continue;
        }
        auto [it, added] = seen.emplace(identity, &input);
        if (!added) {
            return fail("{} is given twice{}: each dump of a series must be another moment",
                        input.name,
                        it->second->name == input.name ? std::string()
                                                       : " (also as " + it->second->name + ")");
        }
    }
    return {};
}

const Module* main_module(const Profile& dump) {
    for (const Module& module : dump.modules) {
        if (module.is_main) {
            return &module;
        }
    }
    return nullptr;
}

std::string describe(const Module& module) {
    return module.build_id.empty() ? module.path
                                   : fmt::format("{} (build id {})", module.path, module.build_id);
}

// Stacks of different programs meet by name only by chance: their series mean nothing.
// The main executables' build ids decide; without one on either side, their paths.
Result<void> check_one_program(const std::vector<Profile>& dumps) {
    const Profile* reference = nullptr;
    for (const Profile& dump : dumps) {
        const Module* main = main_module(dump);
        if (main == nullptr) {
            continue;
        }
        if (reference == nullptr) {
            reference = &dump;
            continue;
        }
        const Module& first = *main_module(*reference);
        bool by_id = !first.build_id.empty() && !main->build_id.empty();
        if (by_id ? first.build_id != main->build_id : first.path != main->path) {
            return fail("{} and {} are dumps of different programs: {} and {}; a series is of "
                        "one program",
                        reference->sources.front(), dump.sources.front(), describe(first),
                        describe(*main));
        }
    }
    return {};
}

} // namespace

Result<LoadedSeries> load_series(std::span<const Input> inputs, const LoadOptions& options) {
    return catching([&]() -> Result<LoadedSeries> {
        HEAPKIT_TRY(check_inputs(inputs));
        // The dumps of one program map the same files: each is opened once for the whole
        // series, and an address named in one dump is not looked up again in the next.
        LoadOptions each = options;
        if (!each.symbols.kept) {
            each.symbols.kept = make_kept_symbols(options.symbols);
        }
        std::vector<Profile> loaded;
        LoadedSeries series;
        std::set<std::string> said;
        for (const Input& input : inputs) {
            HEAPKIT_TRY_ASSIGN(Loaded dump, load_profile(std::span(&input, 1), each));
            for (std::string& warning : dump.report.warnings) {
                if (said.insert(warning).second) { // the same binaries: the same warnings
                    series.report.warnings.push_back(std::move(warning));
                }
            }
            series.report.unnamed_locations =
                std::max(series.report.unnamed_locations, dump.report.unnamed_locations);
            loaded.push_back(std::move(dump.profile));
        }
        HEAPKIT_TRY(check_one_program(loaded));
        std::vector<DumpStamp> stamps;
        for (const Profile& dump : loaded) {
            stamps.push_back(stamp_of(dump));
        }
        for (size_t i : series_order(stamps)) {
            series.dumps.push_back(std::move(loaded[i]));
        }
        return series;
    });
}

} // namespace heapkit
