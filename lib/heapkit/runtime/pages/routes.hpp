// SPDX-License-Identifier: MIT
// Every page the Handler serves, with all it must know of each: one table, so that a new
// page cannot be left out of the conversion limit or the waiting threads by accident.
#pragma once

#include "heapkit/runtime/request.hpp"

#include <functional>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

// Whether a page holds a dump and its conversion (counted against max_conversions).
enum class Converts {
    never,
    always,
    on_post, // /pprof/symbol names addresses only when POSTed
};

// Whether a page waits out a window before it answers (a server gives it a thread of
// its own rather than hold one others need).
enum class Waits {
    never,
    always,      // CPU profiles
    for_seconds, // heap pages asked for a delta (?seconds=N)
};

struct Route {
    std::string_view path;
    std::vector<std::string_view> methods;
    Converts converts = Converts::never;
    Waits waits = Waits::never;
    bool cpu_profile = false; // a CPU profile page: refused when allow_cpu_profiles is off
    std::string_view query;   // what it takes, for index pages: "seconds=N&frequency=HZ"
    std::string_view about;   // one line, for index pages
    std::function<Response(const Request&)> serve;
};

// The table, in the order index pages list it.
const std::vector<Route>& routes();
// Every page, in the order index pages list them (the Handler's pages()).
std::vector<PageInfo> listed_pages();
// The route of `path`, or null.
const Route* find_route(std::string_view path);

bool counts_as_conversion(const Route& route, const Request& request);
bool route_waits(const Route& route, const Request& request);

} // namespace heapkit::runtime
