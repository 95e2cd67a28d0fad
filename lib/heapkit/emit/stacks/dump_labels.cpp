// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/dump_labels.hpp"

#include <map>
#include <set>
#include <string_view>

namespace heapkit {
namespace {

std::string_view base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace

std::vector<std::string> dump_labels(const std::vector<std::string>& sources) {
    std::map<std::string_view, size_t> uses; // base name -> distinct sources with it
    std::set<std::string_view> seen;
    for (const std::string& source : sources) {
        if (!seen.insert(source).second) {
            continue; // the same file twice is one dump, labelled alike
        }
        ++uses[base_name(source)];
    }
    std::vector<std::string> labels;
    labels.reserve(sources.size());
    for (const std::string& source : sources) {
        std::string_view base = base_name(source);
        labels.emplace_back(uses[base] > 1 || base.empty() ? std::string_view(source) : base);
    }
    return labels;
}

} // namespace heapkit
