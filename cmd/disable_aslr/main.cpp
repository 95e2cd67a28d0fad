// SPDX-License-Identifier: MIT
// disable_aslr: run a program with address space layout randomization off, so that
// its heap profiles' addresses repeat from run to run.
#include "version.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <sys/personality.h>
#include <unistd.h>

namespace {

constexpr const char* usage = "usage: disable_aslr [--] PROGRAM [ARGS...]\n"
                              "Run PROGRAM (found through PATH) with ASLR disabled "
                              "(personality ADDR_NO_RANDOMIZE).\n"
                              "Arguments and environment are passed through unchanged.\n"
                              "  --help     print this help and exit\n"
                              "  --version  print the version and exit\n"
                              "Exit status: PROGRAM's own; 127 not found, 126 not executable, "
                              "1 personality() refused or usage error.\n";

} // namespace

int main(int argc, char** argv) {
    int first = 1;
    if (argc > 1 && std::string_view(argv[1]) == "--help") {
        std::fputs(usage, stdout);
        return 0;
    }
    if (argc > 1 && std::string_view(argv[1]) == "--version") {
        std::printf("disable_aslr (heapkit) %s\n", heapkit::cmd::version);
        return 0;
    }
    if (argc > 1 && std::string_view(argv[1]) == "--") {
        first = 2;
    }
    if (first >= argc) {
        std::fputs(usage, stderr);
        return 1;
    }
    // 0xffffffff queries the current persona without changing it.
    int persona = personality(0xffffffff);
    if (persona == -1 ||
        personality(static_cast<unsigned long>(persona) | ADDR_NO_RANDOMIZE) == -1) {
        std::fprintf(stderr, "disable_aslr: error: personality(ADDR_NO_RANDOMIZE) refused: %s\n",
                     std::strerror(errno));
        return 1;
    }
    execvp(argv[first], argv + first);
    int error = errno;
    std::fprintf(stderr, "disable_aslr: error: cannot execute %s: %s\n", argv[first],
                 std::strerror(error));
    return error == ENOENT || error == ENOTDIR ? 127 : 126;
}
