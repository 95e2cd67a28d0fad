// SPDX-License-Identifier: MIT
// The processes of this process's tree that serve their own profiles: a forking server
// under the agent (varnishd's manager and child, nghttpx's master and workers) serves from
// each, and the first process's index page and /metrics list them all, so that a scrape
// target list can be written from one address.
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace heapkit::runtime {

struct ServingProcess {
    pid_t pid = 0;
    std::string role; // "first", or "forked" for a child that serves on a port of its own
    std::string name; // its command name (/proc/PID/comm)
    std::string url;  // http://ADDRESS:PORT/
};

// Where the list comes from (the agent sets it; a service that embeds the runtime has no
// tree to list). Process-wide, as the tree is.
void set_serving_processes_source(std::function<std::vector<ServingProcess>()> source);

// The list now; empty without a source.
std::vector<ServingProcess> serving_processes();

} // namespace heapkit::runtime
