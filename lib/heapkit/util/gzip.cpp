// SPDX-License-Identifier: MIT
#include "heapkit/util/gzip.hpp"

#include <memory>
#include <stdexcept>
#include <zlib.h>

namespace heapkit {
namespace {

// inflateEnd/deflateEnd must run on every path out, errors included.
struct InflateStream {
    z_stream stream{};
    bool ready = false;
    InflateStream() { ready = inflateInit2(&stream, 16 + MAX_WBITS) == Z_OK; }
    ~InflateStream() {
        if (ready) {
            inflateEnd(&stream);
        }
    }
    InflateStream(const InflateStream&) = delete;
    InflateStream& operator=(const InflateStream&) = delete;
};

struct DeflateStream {
    z_stream stream{};
    explicit DeflateStream(int level) {
        if (deflateInit2(&stream, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK) {
            throw std::bad_alloc();
        }
    }
    ~DeflateStream() { deflateEnd(&stream); }
    DeflateStream(const DeflateStream&) = delete;
    DeflateStream& operator=(const DeflateStream&) = delete;
};

constexpr size_t chunk_size = 1 << 16;

} // namespace

bool is_gzip(std::string_view bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> gunzip(std::string_view compressed, std::string_view source) {
    InflateStream z;
    if (!z.ready) {
        return fail("{}: cannot start gzip decompression", source);
    }
    std::string out;
    auto* next = reinterpret_cast<const Bytef*>(compressed.data());
    size_t left = compressed.size();
    while (left > 0) {
        // zlib counts in uInt; feed very large inputs in slices.
        uInt slice = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
        z.stream.next_in = const_cast<Bytef*>(next);
        z.stream.avail_in = slice;
        int rc = Z_OK;
        while (z.stream.avail_in > 0 && rc != Z_STREAM_END) {
            size_t old_size = out.size();
            out.resize(old_size + chunk_size);
            z.stream.next_out = reinterpret_cast<Bytef*>(out.data() + old_size);
            z.stream.avail_out = chunk_size;
            rc = inflate(&z.stream, Z_NO_FLUSH);
            out.resize(old_size + chunk_size - z.stream.avail_out);
            if (rc == Z_BUF_ERROR && z.stream.avail_out != 0) {
                break; // needs more input than this slice holds
            }
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
                return fail("{}: corrupt gzip data ({})", source,
                            z.stream.msg ? z.stream.msg : "?");
            }
        }
        size_t used = slice - z.stream.avail_in;
        next += used;
        left -= used;
        if (rc == Z_STREAM_END) {
            // Another member may follow; anything but another gzip header is an error.
            if (left > 0 && !is_gzip({reinterpret_cast<const char*>(next), left})) {
                return fail("{}: trailing garbage after gzip data", source);
            }
            inflateReset(&z.stream);
        } else if (used == 0) {
            break;
        }
    }
    // A cleanly finished stream leaves zlib in its reset state with no pending input.
    if (z.stream.total_in != 0 || z.stream.avail_in != 0) {
        return fail("{}: truncated gzip data", source);
    }
    return out;
}

std::string gzip(std::string_view raw, int level) {
    DeflateStream z(level);
    std::string out;
    out.resize(deflateBound(&z.stream, static_cast<uLong>(raw.size())) + 64);
    z.stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    z.stream.avail_in = static_cast<uInt>(raw.size());
    z.stream.next_out = reinterpret_cast<Bytef*>(out.data());
    z.stream.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z.stream, Z_FINISH) != Z_STREAM_END) {
        throw std::runtime_error("gzip: deflate did not finish");
    }
    out.resize(z.stream.total_out);
    return out;
}

} // namespace heapkit
