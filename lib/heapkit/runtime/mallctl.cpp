// SPDX-License-Identifier: MIT
#include "heapkit/runtime/mallctl.hpp"

#include <cstring>
#include <fmt/format.h>

namespace heapkit::runtime {
namespace {

std::string_view file_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The copy's stats.allocated after an epoch, if it answers.
std::optional<size_t> allocated(const JemallocCopy& copy) {
    uint64_t epoch = 1;
    size_t size = sizeof(epoch);
    if (copy.mallctl("epoch", &epoch, &size, &epoch, size) != 0) {
        return std::nullopt;
    }
    size_t bytes = 0;
    size = sizeof(bytes);
    if (copy.mallctl("stats.allocated", &bytes, &size, nullptr, 0) != 0) {
        return std::nullopt;
    }
    return bytes;
}

} // namespace

const JemallocCopies& jemalloc_copies() {
    // Static storage, not the heap: the first use may be on a host's thread before its
    // sampling is off (UnsampledScope asks which copy to turn it off in), and an
    // allocation there would stay in the host's profile. Trivially destructible, so still
    // there while the process exits.
    static JemallocCopies found;
    static const bool searched = [] {
        find_jemalloc_copies(found);
        return true;
    }();
    static_cast<void>(searched);
    return found;
}

Result<Mallctl> Mallctl::find() {
    const JemallocCopies& copies = jemalloc_copies();
    if (copies.serving < 0 || copies.split_operators >= 0) {
        char why[1024];
        describe_missing(copies, why, sizeof(why));
        return fail("{}", why);
    }
    return Mallctl(copies.copies[copies.serving]);
}

Result<Mallctl> Mallctl::find(std::string_view which) {
    if (which.empty()) {
        return find();
    }
    const JemallocCopies& copies = jemalloc_copies();
    std::vector<std::string> names;
    for (int i = 0; i < copies.count; ++i) {
        const JemallocCopy& copy = copies.copies[i];
        std::string_view object = file_name(copy.object);
        if (which != copy.prefix && which != object) {
            names.push_back(copy.prefix[0] != '\0' ? std::string(copy.prefix)
                                                   : std::string(object));
            continue;
        }
        if (is_unused(copy)) {
            return fail("jemalloc={}: the copy in {} is never called (the program's malloc is "
                        "another copy's): it holds nothing",
                        which, copy.object);
        }
        if (copies.split_operators >= 0) {
            return find(); // the refusal, said once for every copy
        }
        return Mallctl(copy);
    }
    return fail("jemalloc={}: no such copy of jemalloc in this process{}{}", which,
                names.empty() ? "" : "; there is ", fmt::join(names, ", "));
}

std::optional<Mallctl> Mallctl::own_allocations() {
    const JemallocCopy* own = own_copy(jemalloc_copies());
    return own != nullptr ? std::optional<Mallctl>(Mallctl(*own)) : std::nullopt;
}

std::string Mallctl::symbol() const {
    return std::string(m_copy->prefix) + "mallctl";
}

std::string Mallctl::conf_variable() const {
    char variable[32];
    runtime::conf_variable(m_copy->prefix, variable, sizeof(variable));
    return variable;
}

std::string Mallctl::description() const {
    const JemallocCopy& copy = *m_copy;
    return fmt::format("jemalloc {} {}{}, configured by {}",
                       copy.in_executable ? "linked into" : "in", copy.object,
                       copy.prefix[0] != '\0' ? fmt::format(" (prefix {})", copy.prefix) : "",
                       conf_variable());
}

std::vector<std::string> other_copies_notes() {
    const JemallocCopies& copies = jemalloc_copies();
    std::vector<std::string> notes;
    for (int i = 0; i < copies.count; ++i) {
        if (i == copies.serving) {
            continue;
        }
        const JemallocCopy& copy = copies.copies[i];
        Mallctl other(copy);
        if (is_unused(copy)) {
            notes.push_back(fmt::format("an unused {}: the program's malloc is another copy's, "
                                        "so this one holds nothing (preloading it does not "
                                        "help here)",
                                        other.description()));
            continue;
        }
        auto bytes = allocated(copy);
        notes.push_back(fmt::format("another {}, holding {} bytes that the default profile does "
                                    "not show: its pages take ?jemalloc={}",
                                    other.description(),
                                    bytes ? fmt::format("{}", *bytes) : std::string("some"),
                                    copy.prefix[0] != '\0' ? std::string(copy.prefix)
                                                           : std::string(file_name(copy.object))));
    }
    return notes;
}

Result<void> Mallctl::call(const char* name, void* old_value, size_t* old_size, void* new_value,
                           size_t new_size) const {
    int error = m_copy->mallctl(name, old_value, old_size, new_value, new_size);
    if (error != 0) {
        return fail("{}(\"{}\"): {}", symbol(), name,
                    error == ENOENT ? "not known to this jemalloc (built without profiling "
                                      "or statistics?)"
                                    : std::strerror(error));
    }
    return {};
}

} // namespace heapkit::runtime
