// SPDX-License-Identifier: MIT
// Runs a parsed dump through everything after the reader: model, unsampling and both
// writers, as the tools would with --no-symbolize.
#pragma once

#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/heapkit.hpp"
#include "heapkit/model/build_profile.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <cstdio>
#include <cstdlib>
#include <google/protobuf/stubs/logging.h>
#include <vector>

namespace heapkit::fuzz {

// protobuf only logs what it dislikes (invalid UTF-8 in a string field, say) and goes
// on: make every such complaint a crash the fuzzer reports.
inline const bool protobuf_complaints_abort = [] {
    google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* file, int line,
                                       const std::string& message) {
        std::fprintf(stderr, "protobuf %s:%d: %s\n", file, line, message.c_str());
        if (level >= google::protobuf::LOGLEVEL_ERROR) {
            std::abort();
        }
    });
    return true;
}();

inline void consume(RawDump dump) {
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(dump));
    for (bool per_thread : {false, true}) {
        Profile profile = build_profile(dumps, BuildOptions{per_thread});
        FoldedOptions folded;
        folded.thread_frames = per_thread;
        folded.style = per_thread ? FrameStyle::address : FrameStyle::function;
        static_cast<void>(write_folded(profile, folded));
        static_cast<void>(encode_pprof(profile, PprofOptions{}));
    }
}

} // namespace heapkit::fuzz
