// SPDX-License-Identifier: MIT
#include "heapkit/runtime/request.hpp"

#include "heapkit/util/terminal_text.hpp"

namespace heapkit::runtime {

Response text(int status, std::string body) {
    Response response;
    response.status = status;
    // An error often quotes what the client sent (a path, a query value): its control
    // bytes would reach the terminal of whoever reads the answer (curl, jeprof).
    response.body = status >= 400 ? terminal_safe_lines(body) : std::move(body);
    if (!response.body.empty() && response.body.back() != '\n') {
        response.body += '\n';
    }
    return response;
}

} // namespace heapkit::runtime
