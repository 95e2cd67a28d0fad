// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/debug_files/debug_search.hpp"

#include "heapkit/symbolize/elf/inflated_debug_file.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <utility>

namespace heapkit {
namespace {

bool debuginfod_wanted() {
    const char* urls = std::getenv("DEBUGINFOD_URLS");
    return urls != nullptr && urls[0] != '\0';
}

bool exists(const std::string& path) {
    return access(path.c_str(), F_OK) == 0;
}

std::string_view dir_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view(".") : path.substr(0, slash);
}

std::string_view base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// libdwfl's find_debuginfo callback: its standard search, unless that could end only in
// loading libdebuginfod for nothing.
int find_debuginfo(Dwfl_Module* module, void** userdata, const char* name, Dwarf_Addr base,
                   const char* file_name, const char* debuglink, GElf_Word crc,
                   char** debuginfo_file_name) {
    const auto* search = userdata == nullptr ? nullptr : static_cast<const DebugSearch*>(*userdata);
    if (search != nullptr && file_name != nullptr && !debuginfod_wanted() &&
        !search->may_find(module, file_name, debuglink == nullptr ? "" : debuglink)) {
        errno = ENOENT;
        return -1;
    }
    if (search != nullptr) {
        if (int fd = search->inflated_by_build_id(module, debuginfo_file_name); fd >= 0) {
            return fd;
        }
    }
    return dwfl_standard_find_debuginfo(module, userdata, name, base, file_name, debuglink, crc,
                                        debuginfo_file_name);
}

// The module's build id, as bytes and as the path under .build-id/ ("ab/cdef...").
struct BuildId {
    std::span<const unsigned char> bytes;
    std::string path;
};

BuildId build_id_of(Dwfl_Module* module) {
    const unsigned char* id = nullptr;
    GElf_Addr id_vaddr = 0;
    int id_length = dwfl_module_build_id(module, &id, &id_vaddr);
    BuildId build_id;
    if (id_length > 1) {
        build_id.bytes = {id, static_cast<size_t>(id_length)};
    }
    for (unsigned char byte : build_id.bytes) {
        build_id.path += build_id.path.size() == 2 ? "/" : "";
        fmt::format_to(std::back_inserter(build_id.path), "{:02x}", byte);
    }
    return build_id;
}

} // namespace

std::vector<std::string> debug_dirs_for(const std::vector<std::string>& extra,
                                        const std::string& sysroot) {
    std::vector<std::string> dirs = extra;
    if (!sysroot.empty()) {
        dirs.push_back(sysroot + "/usr/lib/debug");
    }
    return dirs;
}

DebugSearch::DebugSearch(const std::vector<std::string>& extra_dirs)
    // Leading '+': check the CRC of files found through .gnu_debuglink. The empty first
    // element is the file's own directory; absolute elements also serve build-id lookups.
    : m_path("+:.debug:/usr/lib/debug")
    , m_dirs{"", ".debug", "/usr/lib/debug"} {
    for (const std::string& dir : extra_dirs) {
        m_path += ':';
        m_path += dir;
        m_dirs.push_back(dir);
    }
    m_path_pointer = m_path.data();
    m_callbacks.find_elf = dwfl_build_id_find_elf;
    m_callbacks.find_debuginfo = find_debuginfo;
    m_callbacks.section_address = dwfl_offline_section_address;
    m_callbacks.debuginfo_path = &m_path_pointer;
}

void DebugSearch::attach(Dwfl_Module* module) const {
    void** userdata = nullptr;
    dwfl_module_info(module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr) {
        *userdata = const_cast<DebugSearch*>(this); // read back only as const
    }
}

int DebugSearch::inflated_by_build_id(Dwfl_Module* module, char** debuginfo_file_name) const {
    BuildId id = build_id_of(module);
    if (id.bytes.empty()) {
        return -1;
    }
    for (const std::string& dir : m_dirs) {
        std::string path = fmt::format("{}/.build-id/{}.debug", dir, id.path);
        UniqueFd file(dir.starts_with('/') ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1);
        if (!file) {
            continue;
        }
        // The first file found is the one libdwfl's own search would take: this one or
        // none (it then finds and opens it as it is).
        std::string refused;
        UniqueFd inflated = inflated_debug_file(file.get(), id.bytes, &refused);
        if (!refused.empty()) {
            std::lock_guard lock(m_mutex);
            m_warnings.push_back(fmt::format("{}: skipped: {}", path, refused));
        }
        if (inflated && debuginfo_file_name != nullptr) {
            *debuginfo_file_name = ::strdup(path.c_str()); // libdwfl frees it
        }
        return inflated ? inflated.release() : -1;
    }
    return -1;
}

std::vector<std::string> DebugSearch::take_warnings() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_warnings, {});
}

bool DebugSearch::may_find(Dwfl_Module* module, std::string_view file_name,
                           std::string_view debuglink) const {
    BuildId id = build_id_of(module);
    std::string name =
        debuglink.empty() ? fmt::format("{}.debug", base_name(file_name)) : std::string(debuglink);
    // libdwfl also tries the directory of a symlink's target.
    std::vector<std::string> file_dirs{std::string(dir_name(file_name))};
    char resolved[PATH_MAX];
    if (realpath(std::string(file_name).c_str(), resolved) != nullptr) {
        file_dirs.emplace_back(dir_name(resolved));
    }
    for (const std::string& dir : m_dirs) {
        bool absolute = dir.starts_with('/');
        if (absolute && !id.bytes.empty() &&
            exists(fmt::format("{}/.build-id/{}.debug", dir, id.path))) {
            return true;
        }
        for (const std::string& file_dir : file_dirs) {
            std::string candidate = dir.empty() ? fmt::format("{}/{}", file_dir, name)
                                    : absolute  ? fmt::format("{}{}/{}", dir, file_dir, name)
                                                : fmt::format("{}/{}/{}", file_dir, dir, name);
            if (exists(candidate) || (absolute && exists(fmt::format("{}/{}", dir, name)))) {
                return true;
            }
        }
    }
    return false;
}

} // namespace heapkit
