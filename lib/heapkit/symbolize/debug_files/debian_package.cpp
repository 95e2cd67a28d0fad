// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/debug_files/debian_package.hpp"

#include "heapkit/util/helper_environment.hpp"
#include "heapkit/util/output.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace heapkit {
namespace {

// The other spelling of `path` under merged /usr ("/lib/x" and "/usr/lib/x"), or empty.
std::string merged_usr_alias(std::string_view path) {
    for (std::string_view top : {"/lib/", "/lib64/", "/bin/", "/sbin/"}) {
        if (path.starts_with(top)) {
            return "/usr" + std::string(path);
        }
        std::string under_usr = "/usr" + std::string(top);
        if (path.starts_with(under_usr)) {
            return std::string(path.substr(4));
        }
    }
    return {};
}

// Everything `argv` writes to standard output (its errors dropped), or empty when it
// cannot be started. Waits for it to end.
std::string output_of(std::vector<std::string> argv) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        return {};
    }
    UniqueFd read_end(ends[0]);
    UniqueFd write_end(ends[1]);
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) {
        return {};
    }
    posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    // Run from a profiled process (the runtime), nothing of its own goes to dpkg-query:
    // not its descriptors, nor a preloaded profiler (helper_environment).
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    std::vector<char*> args = exec_pointers(argv);
    std::vector<std::string> environment = helper_environment();
    std::vector<char*> envp = exec_pointers(environment);
    pid_t pid = -1;
    int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    write_end.reset(); // only the child writes: EOF when it ends
    std::string out;
    if (spawned != 0) {
        return out;
    }
    char buffer[4096];
    for (;;) {
        ssize_t got = ::read(read_end.get(), buffer, sizeof buffer);
        if (got > 0) {
            out.append(buffer, static_cast<size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            break;
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return out;
}

// The file's modification time in ns, or -1 when it cannot be read.
int64_t modified_nanos(const std::string& path) {
    struct stat status;
    if (::stat(path.c_str(), &status) != 0) {
        return -1;
    }
    return int64_t{status.st_mtim.tv_sec} * 1000000000 + status.st_mtim.tv_nsec;
}

using Remembered = RememberedPackage;

// Big enough for the most entries kept, each a long path: more is not a file we wrote.
constexpr size_t most_remembered_bytes = size_t{16} << 20;

std::map<std::string, Remembered> read_remembered(const std::string& file) {
    auto text = read_regular_file(file, most_remembered_bytes);
    return text ? parse_remembered_packages(*text) : std::map<std::string, Remembered>();
}

// Best effort: a cache that cannot be written is asked again next time. The directory is
// the user's own (make_private_directory) and the file is replaced, never written through.
void write_remembered(const std::string& directory, const std::string& file,
                      const std::map<std::string, Remembered>& all) {
    if (!make_private_directory(directory)) {
        return;
    }
    std::string text;
    size_t written = 0;
    for (const auto& [path, entry] : all) {
        if (written++ == most_remembered_packages) {
            break;
        }
        text += fmt::format("{}\t{}\t{}\n", path, entry.mtime, entry.package);
    }
    (void)write_output({file, false, false, false}, text);
}

// dpkg-query -S for `paths`: their owners, by path.
std::map<std::string, std::string> ask_dpkg(const std::vector<std::string>& paths) {
    std::map<std::string, std::string> packages;
    if (paths.empty()) {
        return packages;
    }
    std::map<std::string, std::string> asked; // spelling -> the path it stands for
    std::vector<std::string> argv{"dpkg-query", "-S"};
    for (const std::string& path : paths) {
        for (std::string spelling : {path, merged_usr_alias(path)}) {
            if (!spelling.empty() && asked.emplace(spelling, path).second) {
                argv.push_back(spelling);
            }
        }
    }
    for (OwnedPath& owned : parse_dpkg_search(output_of(std::move(argv)))) {
        if (auto it = asked.find(owned.path); it != asked.end()) {
            packages.emplace(it->second, std::move(owned.package));
        }
    }
    return packages;
}

} // namespace

std::map<std::string, RememberedPackage> parse_remembered_packages(std::string_view text) {
    std::map<std::string, RememberedPackage> remembered;
    LineCursor lines(text);
    while (auto line = lines.next()) {
        if (remembered.size() == most_remembered_packages) {
            break;
        }
        size_t first = line->find('\t');
        size_t second = first == std::string_view::npos ? first : line->find('\t', first + 1);
        if (second == std::string_view::npos) {
            continue;
        }
        RememberedPackage entry;
        std::string_view mtime = line->substr(first + 1, second - first - 1);
        if (std::from_chars(mtime.data(), mtime.data() + mtime.size(), entry.mtime).ec !=
            std::errc()) {
            continue;
        }
        entry.package = std::string(line->substr(second + 1));
        remembered[std::string(line->substr(0, first))] = std::move(entry);
    }
    return remembered;
}

std::vector<OwnedPath> parse_dpkg_search(const std::string& output) {
    std::vector<OwnedPath> owned;
    std::string_view rest = output;
    while (!rest.empty()) {
        size_t newline = rest.find('\n');
        std::string_view line = rest.substr(0, newline);
        rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
        size_t split = line.find(": /");
        if (split == std::string_view::npos || line.starts_with("diversion ")) {
            continue;
        }
        std::string_view package = line.substr(0, line.find_first_of(",:"));
        if (package.empty() || package.find(' ') != std::string_view::npos) {
            continue;
        }
        owned.push_back({std::string(line.substr(split + 2)), std::string(package)});
    }
    return owned;
}

std::map<std::string, std::string> debian_packages_of(const std::vector<std::string>& paths,
                                                      const std::string& cache_directory) {
    std::map<std::string, std::string> packages;
    if (paths.empty()) {
        return packages;
    }
    std::string file =
        cache_directory.empty() ? std::string() : cache_directory + "/debian-packages";
    std::map<std::string, Remembered> remembered =
        file.empty() ? std::map<std::string, Remembered>() : read_remembered(file);
    std::vector<std::string> unknown;
    std::map<std::string, int64_t> mtimes;
    for (const std::string& path : paths) {
        int64_t mtime = modified_nanos(path);
        mtimes[path] = mtime;
        auto it = remembered.find(path);
        if (mtime >= 0 && it != remembered.end() && it->second.mtime == mtime) {
            if (!it->second.package.empty()) {
                packages[path] = it->second.package;
            }
        } else {
            unknown.push_back(path);
        }
    }
    if (unknown.empty()) {
        return packages;
    }
    std::map<std::string, std::string> found = ask_dpkg(unknown);
    for (const std::string& path : unknown) {
        auto it = found.find(path);
        std::string package = it == found.end() ? std::string() : it->second;
        if (!package.empty()) {
            packages[path] = package;
        }
        if (mtimes[path] >= 0) {
            remembered[path] = Remembered{mtimes[path], std::move(package)};
        }
    }
    if (!file.empty()) {
        write_remembered(cache_directory, file, remembered);
    }
    return packages;
}

} // namespace heapkit
