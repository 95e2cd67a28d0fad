// SPDX-License-Identifier: MIT
#include "heapkit/runtime/index_page.hpp"

#include "heapkit/runtime/page_query.hpp"
#include "heapkit/util/xml.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace heapkit::runtime {

Response index_page(std::string_view prefix) {
    std::string rows;
    for (const PageInfo& page : pages()) {
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
                    "<h1>heapkit: {}</h1>\n<p>Process {}. Heap pages need "
                    "MALLOC_CONF=prof:true; a query parameter left out takes its "
                    "default.</p>\n<table>\n<tr><th>page</th><th>query</th><th>what it "
                    "shows</th></tr>\n{}</table>\n</body></html>",
                    escape_xml(prefix), getpid(), escape_xml(prefix), getpid(), rows));
    response.content_type = "text/html; charset=utf-8";
    return response;
}

} // namespace heapkit::runtime
