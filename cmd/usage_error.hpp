// SPDX-License-Identifier: MIT
// A usage error as the tools print it: "<tool>: error: …", a suggestion when an unknown
// flag is a near miss of a known one ("--svgg": did you mean --svg?), and where the
// options are listed. Help and version requests are CLI11's own (exit 0).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::cmd {

// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`.
inline size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

// The flag of `app` and its groups (flag_group) nearest to `word`, if nearer than
// `best_distance` edits; `best` and `best_distance` say the nearest so far.
inline void find_nearest_flag(const CLI::App& app, std::string_view word, std::string& best,
                              size_t& best_distance) {
    for (const CLI::Option* option : app.get_options()) {
        for (const std::string& name : option->get_lnames()) {
            std::string flag = "--" + name;
            size_t distance = edit_distance(word, flag);
            if (distance < best_distance) {
                best = flag;
                best_distance = distance;
            }
        }
    }
    auto groups = [](const CLI::App* sub) { return sub->get_name().empty(); };
    for (const CLI::App* group : app.get_subcommands(groups)) {
        find_nearest_flag(*group, word, best, best_distance);
    }
}

// The known flag nearest to `given` ("--svgg"), within two edits (one for short words);
// "" when none is that near.
inline std::string nearest_flag(const CLI::App& app, std::string_view given) {
    std::string_view word = given.substr(0, given.find('='));
    std::string best;
    size_t best_distance = word.size() <= 5 ? 2 : 3;
    find_nearest_flag(app, word, best, best_distance);
    return best;
}

// Prints `error` for `app` and returns the exit status: 0 for --help and --version, 1 else.
inline int usage_error(const CLI::App& app, const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) {
        return app.exit(error);
    }
    std::string tool = app.get_name();
    fmt::print(stderr, "{}: error: {}\n", tool, error.what());
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        std::string_view message = error.what();
        message.remove_prefix(std::min(message.size(), message.find(": ") + 2));
        while (!message.empty()) {
            std::string_view word = message.substr(0, message.find(' '));
            message.remove_prefix(std::min(message.size(), word.size() + 1));
            std::string near = word.starts_with("-") ? nearest_flag(app, word) : "";
            if (!near.empty()) {
                fmt::print(stderr, "{}: {}: did you mean {}?\n", tool, word, near);
            }
        }
    }
    fmt::print(stderr, "{}: '{} --help' lists the options\n", tool, tool);
    return 1;
}

} // namespace heapkit::cmd
