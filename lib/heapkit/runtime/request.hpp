// SPDX-License-Identifier: MIT
// The runtime's vocabulary, at the bottom of runtime/: a request as any server hands it
// over, the answer a page gives, a page as an index lists it, and the plain-text answer
// every part writes (a page's, a refusal of the server's). Pages and http/ include this,
// not the Handler.
#pragma once

#include "heapkit/util/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace heapkit::runtime {

// An HTTP request as any server hands it over.
struct Request {
    std::string method; // "GET", "POST", "HEAD", ...
    std::string path;   // without the query: "/pprof/heap"
    std::string query;  // after '?', still percent-encoded
    std::map<std::string, std::string> headers;
    std::string body;
    // How a page that takes its time (a CPU profile, a heap delta: Handler::waits) waits
    // out its window; a server passes one that returns early when it stops. Unset: sleep.
    std::function<void(std::chrono::milliseconds)> wait;
    // True once the server stops or the client has gone (the window then ends early): a
    // page whose window was cut short answers 503 at once instead of converting what it
    // has (symbolizing takes ~0.1 s, which would delay the process's exit; a client that
    // has gone reads nothing). Unset: never.
    std::function<bool()> stopping;
    // Which copy of jemalloc a heap page is about, where a process has several (a Rust
    // service's own and a preloaded one): `?jemalloc=PREFIX` or the object's file name,
    // taken out of the query by the Handler (a page about the whole process answers 400 to
    // it). Empty: the copy that holds the program's heap.
    std::string jemalloc;
};

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::map<std::string, std::string> headers; // besides Content-Type
    std::string body;
};

// One page the Handler serves, as an index lists it.
struct PageInfo {
    std::string_view path;
    std::string_view query; // the parameters it takes, "seconds=N&frequency=HZ"; may be empty
    std::string_view about; // one line for a person
};

// A plain-text answer, ending in a newline; an error's (status 400 and up) with its
// control characters but newlines and tabs escaped (terminal_safe_lines).
Response text(int status, std::string body);
inline Response failure(int status, const Error& error) {
    return text(status, error.message);
}

} // namespace heapkit::runtime
