// SPDX-License-Identifier: MIT
#include "heapkit/unsample/heap_values.hpp"

namespace heapkit {

std::string_view name_of(SampleType type) {
    switch (type) {
    case SampleType::alloc_objects:
        return "alloc_objects";
    case SampleType::alloc_space:
        return "alloc_space";
    case SampleType::inuse_objects:
        return "inuse_objects";
    case SampleType::inuse_space:
        return "inuse_space";
    }
    return "inuse_space";
}

std::string_view unit_of(SampleType type) {
    return type == SampleType::alloc_space || type == SampleType::inuse_space ? "bytes" : "count";
}

std::optional<SampleType> parse_sample_type(std::string_view name) {
    for (SampleType type : {SampleType::alloc_objects, SampleType::alloc_space,
                            SampleType::inuse_objects, SampleType::inuse_space}) {
        if (name == name_of(type)) {
            return type;
        }
    }
    return std::nullopt;
}

int64_t value_of(const HeapValues& values, SampleType type) {
    switch (type) {
    case SampleType::alloc_objects:
        return values.alloc_objects;
    case SampleType::alloc_space:
        return values.alloc_space;
    case SampleType::inuse_objects:
        return values.inuse_objects;
    case SampleType::inuse_space:
        return values.inuse_space;
    }
    return 0;
}

bool needs_accum(SampleType type) {
    return type == SampleType::alloc_objects || type == SampleType::alloc_space;
}

} // namespace heapkit
