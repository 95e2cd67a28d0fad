// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/detached_indexer.hpp"

#include "heapkit/util/helper_environment.hpp"
#include "heapkit/util/spawn_setup.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <set>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace heapkit {

std::string sibling_indexer() {
    if (const char* configured = std::getenv("HEAPKIT_INDEXER")) {
        return configured;
    }
    char self[PATH_MAX];
    ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) {
        return {};
    }
    std::string path(self, static_cast<size_t>(length));
    path = path.substr(0, path.rfind('/') + 1) + "heapkit-index";
    return ::access(path.c_str(), X_OK) == 0 ? path : std::string();
}

IndexBuilder detached_index_builder(DetachedIndexer indexer) {
    // Each file handed over once per process: a --growth series symbolizes dump after
    // dump of the same builds, faster than an indexer takes their locks.
    auto handed = std::make_shared<std::set<std::string>>();
    return [indexer = std::move(indexer), handed](const std::vector<std::string>& asked) {
        std::vector<std::string> paths;
        for (const std::string& path : asked) {
            if (handed->insert(path).second) {
                paths.push_back(path);
            }
        }
        if (paths.empty()) {
            return std::vector<std::string>{};
        }
        std::vector<std::string> arguments = {indexer.program, "--background", "--quiet",
                                              "--cache-dir", indexer.cache_directory};
        for (const std::string& directory : indexer.debug_dirs) {
            arguments.insert(arguments.end(), {"--debug-dir", directory});
        }
        if (!indexer.sysroot.empty()) {
            arguments.insert(arguments.end(), {"--sysroot", indexer.sysroot});
        }
        arguments.emplace_back("--");
        arguments.insert(arguments.end(), paths.begin(), paths.end());
        std::vector<std::string> environment = helper_environment();
        std::vector<char*> argv = exec_pointers(arguments);
        std::vector<char*> envp = exec_pointers(environment);

        SpawnSetup setup;
        // A session of its own: the terminal's ^C and hangup are for the command, and a
        // shell or test harness waiting on our pipes is not kept waiting by it.
        setup.default_signals(POSIX_SPAWN_SETSID);
        for (int stream : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
            posix_spawn_file_actions_addopen(setup.actions(), stream, "/dev/null",
                                             stream == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
        }
        posix_spawn_file_actions_addclosefrom_np(setup.actions(), STDERR_FILENO + 1);
        pid_t pid = 0;
        int error = ::posix_spawn(&pid, indexer.program.c_str(), setup.actions(),
                                  setup.attributes(), argv.data(), envp.data());
        if (error != 0) {
            return std::vector<std::string>{
                fmt::format("the address indexes of new builds are not being made: cannot "
                            "start {}: {}",
                            indexer.program, std::strerror(error))};
        }
        return std::vector<std::string>{};
    };
}

Result<void> enter_background(const std::string& cache_directory, unsigned max_cpu_seconds,
                              uint64_t min_free_bytes) {
    ::setpriority(PRIO_PROCESS, 0, 19);
    // ioprio_set(IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE): glibc has no wrapper.
    constexpr int who_process = 1;
    constexpr int class_idle = 3;
    constexpr int class_shift = 13;
    ::syscall(SYS_ioprio_set, who_process, 0, class_idle << class_shift);
    rlimit cpu{max_cpu_seconds, max_cpu_seconds + 5};
    ::setrlimit(RLIMIT_CPU, &cpu);
    struct statvfs space {};
    // The directory may not exist yet: its file system is its nearest existing ancestor's
    // (the working directory's for a relative path). When none can be asked, go on.
    bool measured = false;
    for (std::filesystem::path at = cache_directory; !measured && !at.empty();
         at = at == at.parent_path() ? std::filesystem::path() : at.parent_path()) {
        measured = ::statvfs(at.c_str(), &space) == 0;
    }
    measured = measured || ::statvfs(".", &space) == 0;
    uint64_t free_bytes = uint64_t{space.f_bavail} * space.f_frsize;
    if (measured && free_bytes < min_free_bytes) {
        return fail("{}: {} MB free, under the {} MB an index may need: nothing indexed",
                    cache_directory, free_bytes >> 20, min_free_bytes >> 20);
    }
    return {};
}

} // namespace heapkit
