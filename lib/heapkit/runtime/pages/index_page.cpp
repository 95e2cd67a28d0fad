// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/index_page.hpp"

#include "heapkit/runtime/export/stripped_modules.hpp"
#include "heapkit/runtime/guest/serving_processes.hpp"
#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/util/xml.hpp"

#include <cerrno>
#include <fmt/format.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// The stripped modules profiles have met so far, with how to get their names: their code
// shows as file!0x<address> in every profile until then.
std::string stripped_section() {
    std::string items;
    for (const std::string& note : stripped_module_notes_so_far()) {
        items += fmt::format("<li>{}</li>\n", escape_xml(note));
    }
    if (items.empty()) {
        return {};
    }
    return fmt::format("<h2>Stripped modules</h2>\n<p>Their code shows as "
                       "<code>file!0x&lt;address&gt;</code> in profiles until its names are "
                       "there:</p>\n<ul>\n{}</ul>\n",
                       items);
}

// The other processes of the tree that serve (a forking server under the agent), with
// links: a person who opened the first process's page finds the workers from it.
std::string serving_table() {
    std::vector<ServingProcess> processes = serving_processes();
    if (processes.empty()) {
        return "";
    }
    std::string rows;
    for (const ServingProcess& process : processes) {
        std::string url = escape_xml(process.url);
        rows +=
            fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td><a href=\"{}\">{}</a>"
                        "</td></tr>\n",
                        process.pid, escape_xml(process.role), escape_xml(process.name), url, url);
    }
    return "<h2>Processes of this tree that serve</h2>\n<table>\n<tr><th>pid</th><th>role"
           "</th><th>name</th><th>url</th></tr>\n" +
           rows + "</table>\n";
}

// Which copy of jemalloc the heap pages show, and any other in the process: a program may
// carry its own (static, or a Rust service's prefixed one) beside a preloaded one.
std::string jemalloc_section() {
    auto served = Mallctl::find();
    std::string items =
        fmt::format("<li>{}</li>\n", escape_xml(served ? "Heap pages show " + served->description()
                                                       : served.error().message));
    for (const std::string& note : other_copies_notes()) {
        items += fmt::format("<li>{}</li>\n", escape_xml("Also " + note));
    }
    return "<h2>jemalloc</h2>\n<ul>\n" + items + "</ul>\n";
}

// The variable that turns profiling on for the copy served.
std::string conf_variable() {
    auto served = Mallctl::find();
    return served ? served->conf_variable() : "MALLOC_CONF";
}

} // namespace

Response index_page(std::string_view prefix, const std::vector<PageInfo>& pages) {
    std::string rows;
    for (const PageInfo& page : pages) {
        if (!page.path.starts_with(prefix) || page.path == prefix) {
            continue;
        }
        std::string path = escape_xml(page.path);
        rows += fmt::format("<tr><td><a href=\"{}\">{}</a></td><td><code>{}</code></td>"
                            "<td>{}</td></tr>\n",
                            path, path, escape_xml(page.query), escape_xml(page.about));
    }
    Response response = text(
        200,
        fmt::format("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                    "<title>heapkit: {} (pid {})</title>\n<style>body{{font-family:sans-serif}}"
                    "td{{vertical-align:top;padding:3px 10px 3px 0}}"
                    "td:nth-child(2){{max-width:26em;overflow-wrap:anywhere}}"
                    "th{{text-align:left}}</style></head>\n<body>\n"
                    "<h1>heapkit: {}</h1>\n<p>Process {} ({}). Heap pages need "
                    "{}=prof:true; a query parameter left out takes its "
                    "default.</p>\n<table>\n<tr><th>page</th><th>query</th><th>what it "
                    "shows</th></tr>\n{}</table>\n{}</body></html>",
                    escape_xml(prefix), getpid(), escape_xml(prefix), getpid(),
                    escape_xml(program_invocation_short_name), escape_xml(conf_variable()), rows,
                    jemalloc_section() + serving_table() + stripped_section()));
    response.content_type = "text/html; charset=utf-8";
    return response;
}

} // namespace heapkit::runtime
