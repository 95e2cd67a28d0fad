// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/debug_files/debian_package.hpp"

#include "heapkit/util/output.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <dirent.h>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <string_view>
#include <sys/stat.h>

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

constexpr const char* dpkg_info = "/var/lib/dpkg/info";

// Far more than any package's list of files (texlive's are under 4 MB).
constexpr size_t most_list_bytes = size_t{64} << 20;

// The file lists of dpkg's database, by file name.
std::vector<std::string> dpkg_lists() {
    std::vector<std::string> lists;
    std::unique_ptr<DIR, int (*)(DIR*)> directory(::opendir(dpkg_info), ::closedir);
    while (directory) {
        const dirent* entry = ::readdir(directory.get());
        if (entry == nullptr) {
            break;
        }
        if (!package_of_list(entry->d_name).empty()) {
            lists.emplace_back(entry->d_name);
        }
    }
    std::sort(lists.begin(), lists.end());
    return lists;
}

// What a package named after the file would start with: "libpython3.11" for
// libpython3.11.so.1.0, "salmon" for salmon; empty when too short to tell.
std::string package_stem(std::string_view path) {
    std::string_view name = path.substr(path.rfind('/') + 1);
    name = name.substr(0, name.find(".so"));
    std::string stem;
    for (char c : name) {
        stem += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return stem.size() >= 3 ? stem : std::string();
}

// Whether dpkg may own `path`: packages install under /usr (but not /usr/local), /lib*,
// /bin, /sbin and /opt; a program built in a home or build directory is no package's,
// and asking would read every list for nothing.
bool could_be_packaged(std::string_view path) {
    if (path.starts_with("/usr/local/")) {
        return false;
    }
    for (std::string_view top : {"/usr/", "/lib", "/bin/", "/sbin/", "/opt/"}) {
        if (path.starts_with(top)) {
            return true;
        }
    }
    return false;
}

// Reads `list` and gives the paths of `unowned` it holds (in any spelling) their package.
void search_list(const std::string& list, std::map<std::string, std::string>& unowned,
                 std::map<std::string, std::string>& packages) {
    auto text = read_regular_file(fmt::format("{}/{}", dpkg_info, list), most_list_bytes);
    if (!text) {
        return;
    }
    for (auto it = unowned.begin(); it != unowned.end();) {
        if (list_holds(*text, it->first)) {
            packages.emplace(it->second, package_of_list(list));
            it = unowned.erase(it);
        } else {
            ++it;
        }
    }
}

// The owners of `paths`, by path, from dpkg's file lists: those named like each file
// first, then the others while any path is unowned.
std::map<std::string, std::string> search_dpkg(const std::vector<std::string>& paths) {
    std::map<std::string, std::string> packages;
    std::map<std::string, std::string> unowned; // spelling -> the path it stands for
    for (const std::string& path : paths) {
        for (std::string spelling : {path, merged_usr_alias(path)}) {
            if (!spelling.empty() && could_be_packaged(path)) {
                unowned.emplace(spelling, path);
            }
        }
    }
    if (unowned.empty()) {
        return packages;
    }
    std::vector<std::string> lists = dpkg_lists();
    std::vector<bool> read(lists.size(), false);
    for (const std::string& path : paths) {
        std::string stem = package_stem(path);
        for (size_t i = 0; i < lists.size() && !stem.empty(); ++i) {
            if (!read[i] && lists[i].starts_with(stem)) {
                search_list(lists[i], unowned, packages);
                read[i] = true;
            }
        }
    }
    // A spelling's path found under its other spelling is owned too.
    std::erase_if(unowned, [&](const auto& entry) { return packages.contains(entry.second); });
    for (size_t i = 0; i < lists.size() && !unowned.empty(); ++i) {
        if (!read[i]) {
            search_list(lists[i], unowned, packages);
            std::erase_if(unowned,
                          [&](const auto& entry) { return packages.contains(entry.second); });
        }
    }
    return packages;
}

// The value of `key` in os-release text ("VERSION_CODENAME=bookworm"), unquoted.
std::string os_release_value(std::string_view text, std::string_view key) {
    LineCursor lines(text);
    while (auto line = lines.next()) {
        if (line->starts_with(key) && line->substr(key.size()).starts_with('=')) {
            std::string_view value = line->substr(key.size() + 1);
            if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
                value = value.substr(1, value.size() - 2);
            }
            return std::string(value);
        }
    }
    return {};
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

std::string_view package_of_list(std::string_view file_name) {
    if (!file_name.ends_with(".list") || file_name.size() == 5) {
        return {};
    }
    file_name.remove_suffix(5);
    return file_name.substr(0, file_name.find(':'));
}

bool list_holds(std::string_view list, std::string_view path) {
    for (size_t at = list.find(path); at != std::string_view::npos; at = list.find(path, at + 1)) {
        size_t end = at + path.size();
        if ((at == 0 || list[at - 1] == '\n') && (end == list.size() || list[end] == '\n')) {
            return true;
        }
    }
    return false;
}

DebugArchive debian_debug_archive() {
    DebugArchive archive;
    constexpr size_t most_bytes = size_t{1} << 20;
    auto release = read_regular_file("/etc/os-release", most_bytes);
    if (!release) {
        release = read_regular_file("/usr/lib/os-release", most_bytes);
    }
    if (release && os_release_value(*release, "ID") == "debian") {
        archive.codename = os_release_value(*release, "VERSION_CODENAME");
    }
    std::vector<std::string> sources{"/etc/apt/sources.list"};
    std::error_code error;
    for (const auto& entry :
         std::filesystem::directory_iterator("/etc/apt/sources.list.d", error)) {
        sources.push_back(entry.path().string());
    }
    for (const std::string& source : sources) {
        auto text = read_regular_file(source, most_bytes);
        if (text && text->find("debian-debug") != std::string::npos) {
            archive.listed = true;
        }
    }
    return archive;
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
    std::map<std::string, std::string> found = search_dpkg(unknown);
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
