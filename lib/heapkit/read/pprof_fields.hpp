// SPDX-License-Identifier: MIT
// The top-level fields of an encoded pprof Profile, one at a time: for the reader, which
// reads the samples apart from the tables, and for naming in place, which copies what it
// does not change.
#pragma once

#include "heapkit/util/error.hpp"

#include <climits>
#include <cstdint>
#include <google/protobuf/io/coded_stream.h>
#include <string_view>

namespace heapkit {

inline constexpr uint32_t pprof_length_delimited = 2; // protobuf's wire type

// Calls `visit(number, whole, body)` for each top-level field of `encoded`, with its bytes
// (`whole`) and, when it is length-delimited, its contents (`body`). `number` is 0 for a
// field that is not length-delimited: protobuf keeps a field of the wrong wire type as an
// unknown field, never as an entry of a table. An error for a field that is cut short or
// of a kind no Profile field is (groups).
template <class Visit> Result<void> each_pprof_field(std::string_view encoded, Visit visit) {
    if (encoded.size() > static_cast<size_t>(INT_MAX)) {
        return fail("a pprof profile of {} bytes is larger than protobuf reads (2 GiB)",
                    encoded.size());
    }
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(encoded.data()),
                                              static_cast<int>(encoded.size()));
    in.SetTotalBytesLimit(INT_MAX);
    while (true) {
        auto start = static_cast<size_t>(in.CurrentPosition());
        uint32_t tag = in.ReadTag();
        if (tag == 0) {
            if (start == encoded.size()) {
                return {};
            }
            return fail("its protobuf encoding is damaged at byte {}", start);
        }
        bool read = true;
        std::string_view body;
        switch (tag & 7) {
        case 0: {
            uint64_t value = 0;
            read = in.ReadVarint64(&value);
            break;
        }
        case 1:
            read = in.Skip(8);
            break;
        case 5:
            read = in.Skip(4);
            break;
        case pprof_length_delimited: {
            uint32_t length = 0;
            read = in.ReadVarint32(&length) && length <= static_cast<uint32_t>(INT_MAX);
            auto at = static_cast<size_t>(in.CurrentPosition());
            read = read && in.Skip(static_cast<int>(length));
            body = read ? encoded.substr(at, length) : std::string_view();
            break;
        }
        default:
            read = false; // groups: no field of Profile is one
        }
        if (!read) {
            return fail("its protobuf encoding is damaged or cut short at byte {}", start);
        }
        auto end = static_cast<size_t>(in.CurrentPosition());
        visit((tag & 7) == pprof_length_delimited ? tag >> 3 : 0,
              encoded.substr(start, end - start), body);
    }
}

} // namespace heapkit
