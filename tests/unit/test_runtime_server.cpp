// SPDX-License-Identifier: MIT
// The runtime's Server on a loopback port, without jemalloc: its threads, its descriptors
// (above the floor, close-on-exec, let go once the program closed them), a fork()ed
// child's copies, and control off by default.
#include "heapkit/runtime/guest/descriptor.hpp"
#include "heapkit/runtime/server.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace heapkit::runtime;

namespace {

// The whole answer to `request` (the server closes: Connection: close), or "".
std::string ask(int port, const std::string& request) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
        char buffer[4096];
        ssize_t got;
        while ((got = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
            answer.append(buffer, static_cast<size_t>(got));
        }
    }
    ::close(fd);
    return answer;
}

std::string get(int port, const std::string& path) {
    return ask(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

// The descriptors of this process at or above `floor`.
std::vector<int> descriptors_from(int floor) {
    std::vector<int> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        int fd = std::stoi(entry.path().filename().string());
        if (fd >= floor) {
            found.push_back(fd);
        }
    }
    return found;
}

} // namespace

TEST_CASE("heapkit::runtime::Descriptor moves above the floor and knows its object") {
    int floor = descriptor_floor();
    Descriptor pipe_end;
    {
        int ends[2];
        REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
        ::close(ends[1]);
        pipe_end = Descriptor::adopt(ends[0], nullptr);
        CHECK(::fcntl(ends[0], F_GETFD) == -1); // the low number is closed
    }
    CHECK(pipe_end.number() >= floor);
    CHECK(pipe_end.intact());
    CHECK((::fcntl(pipe_end.number(), F_GETFD) & FD_CLOEXEC) != 0);
    // The program closes it and opens a file on the number: not the server's any more.
    int number = pipe_end.number();
    ::close(number);
    int file = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(::dup2(file, number) == number);
    ::close(file);
    CHECK_FALSE(pipe_end.intact());
    pipe_end.reset(); // lets go, does not close the program's file
    CHECK(::fcntl(number, F_GETFD) != -1);
    ::close(number);
}

TEST_CASE("heapkit::runtime::Server serves from threads that block every signal") {
    auto server = Server::start(ServerOptions{});
    REQUIRE(server);
    int port = (*server)->port();
    CHECK(get(port, "/pprof/cmdline").starts_with("HTTP/1.1 200 OK\r\n"));
    // Control is off unless the service turns it on.
    CHECK(ask(port, "POST /pprof/conf?prof.active:false HTTP/1.1\r\nHost: localhost\r\n"
                    "Connection: close\r\n\r\n")
              .starts_with("HTTP/1.1 403 "));
    int threads = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream status(task.path() / "status");
        std::string line;
        std::string name;
        std::string blocked;
        while (std::getline(status, line)) {
            if (line.starts_with("Name:\t")) {
                name = line.substr(6);
            } else if (line.starts_with("SigBlk:\t")) {
                blocked = line.substr(8);
            }
        }
        if (name.starts_with("heapkit-")) {
            ++threads;
            // The signals a host uses (glibc keeps two of its own unblockable).
            uint64_t mask = std::stoull(blocked, nullptr, 16);
            for (int signal : {SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGCHLD,
                               SIGPROF, SIGWINCH, SIGRTMIN + 2}) {
                bool is_blocked = (mask >> (signal - 1)) & 1;
                CHECK_MESSAGE(is_blocked, name, " leaves signal ", signal, " unblocked");
            }
        }
    }
    CHECK(threads >= 2); // the loop and the workers
    (*server)->stop();
}

TEST_CASE("heapkit::runtime::Server stops serving once the program closed its descriptors") {
    std::mutex mutex;
    std::vector<std::string> said;
    ServerOptions options;
    options.warn = [&](const std::string& line) {
        std::lock_guard lock(mutex);
        said.push_back(line);
    };
    int floor = descriptor_floor();
    auto before = descriptors_from(floor);
    auto server = Server::start(options);
    REQUIRE(server);
    auto ours = descriptors_from(floor);
    CHECK(ours.size() == before.size() + 3); // listener, epoll, eventfd, all above the floor
    CHECK((*server)->listener_intact());
    // What a daemon does: every descriptor closed, files opened on the same numbers.
    for (int fd : ours) {
        if (std::find(before.begin(), before.end(), fd) == before.end()) {
            int file = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            ::dup2(file, fd);
            ::close(file);
        }
    }
    for (int i = 0; i < 30 && (*server)->listener_intact(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1200)); // the loop's next look
    CHECK_FALSE((*server)->listener_intact());
    (*server)->stop(); // joins; closes none of the program's files
    for (int fd : ours) {
        if (std::find(before.begin(), before.end(), fd) == before.end()) {
            CHECK_MESSAGE(::fcntl(fd, F_GETFD) != -1, fd);
            ::close(fd);
        }
    }
    std::lock_guard lock(mutex);
    REQUIRE(said.size() == 1);
    CHECK(said[0].find("stops serving") != std::string::npos);
}

TEST_CASE("heapkit::runtime::Server after fork(): the child closes its copies, the parent "
          "serves on") {
    auto server = Server::start(ServerOptions{});
    REQUIRE(server);
    int port = (*server)->port();
    int floor = descriptor_floor();
    auto before = descriptors_from(floor);
    pid_t child = ::fork();
    if (child == 0) {
        (*server)->abandon_after_fork();
        static_cast<void>(server->release());
        _exit(descriptors_from(floor).size() + 3 == before.size() ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(get(port, "/pprof/cmdline").starts_with("HTTP/1.1 200 OK\r\n"));
}
