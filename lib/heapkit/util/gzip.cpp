// SPDX-License-Identifier: MIT
#include "heapkit/util/gzip.hpp"

#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>
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
constexpr size_t max_slice = size_t{1} << 30; // what zlib's uInt counts are given at once

} // namespace

bool is_gzip(std::string_view bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

// A limit in words: "2 GiB", "64 MiB", else bytes.
std::string size_text(uint64_t bytes) {
    if (bytes % (uint64_t{1} << 30) == 0) {
        return fmt::format("{} GiB", bytes >> 30);
    }
    if (bytes % (uint64_t{1} << 20) == 0) {
        return fmt::format("{} MiB", bytes >> 20);
    }
    return fmt::format("{} bytes", bytes);
}

// Inflates every member of `compressed` a chunk at a time into a buffer of its own,
// handing each chunk to `take` with how many compressed bytes have been read so far (it
// may stop it with an error): memory stays one chunk however far the data inflates.
template <class Take>
Result<void> inflate_chunks(std::string_view compressed, std::string_view source, Take take) {
    InflateStream z;
    if (!z.ready) {
        return fail("{}: cannot start gzip decompression", source);
    }
    auto chunk = std::make_unique<char[]>(chunk_size);
    auto* next = reinterpret_cast<const Bytef*>(compressed.data());
    size_t left = compressed.size();
    while (left > 0) {
        // zlib counts in uInt; feed very large inputs in slices.
        uInt slice = static_cast<uInt>(std::min(left, max_slice));
        z.stream.next_in = const_cast<Bytef*>(next);
        z.stream.avail_in = slice;
        int rc = Z_OK;
        while (z.stream.avail_in > 0 && rc != Z_STREAM_END) {
            z.stream.next_out = reinterpret_cast<Bytef*>(chunk.get());
            z.stream.avail_out = chunk_size;
            rc = inflate(&z.stream, Z_NO_FLUSH);
            uint64_t consumed = compressed.size() - left + (slice - z.stream.avail_in);
            if (auto taken =
                    take(std::string_view(chunk.get(), chunk_size - z.stream.avail_out), consumed);
                !taken) {
                return taken;
            }
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
    return {};
}

} // namespace

Result<std::string> gunzip(std::string_view compressed, std::string_view source,
                           const GunzipLimits& limits) {
    // Two passes: the first only measures (and checks the limits, the first chunk while
    // nothing else is inflated), so a bomb costs one chunk of memory, not the limit; the
    // second fills a string of exactly that size, never one regrown to twice it. Inflating
    // twice costs far less than the parse that follows.
    uint64_t size = 0;
    // Only the default bound refuses a ratio: a bound the user gives is taken as it is.
    bool by_ratio = limits.max_bytes == default_max_inflated;
    auto measure = [&](std::string_view chunk, uint64_t consumed) -> Result<void> {
        if (limits.text && size == 0 && chunk.find('\0') != std::string_view::npos &&
            (limits.binary_ok == nullptr || !limits.binary_ok(chunk))) {
            return fail("{}: inflates to binary data, not text", source);
        }
        size += chunk.size();
        if (size > limits.max_bytes) {
            return fail("{}: inflates to more than {}, the most one input may (a gzip bomb? "
                        "--max-inflated or HEAPKIT_MAX_INFLATED raises it)",
                        source, size_text(limits.max_bytes));
        }
        if (by_ratio && size > bomb_ratio_from && size > bomb_ratio * consumed) {
            return fail("{}: inflates more than {} times its compressed size, far beyond what "
                        "real dumps do (a gzip bomb? --max-inflated or HEAPKIT_MAX_INFLATED "
                        "accepts it)",
                        source, bomb_ratio);
        }
        return {};
    };
    HEAPKIT_TRY(inflate_chunks(compressed, source, measure));
    std::string out;
    out.reserve(static_cast<size_t>(size));
    HEAPKIT_TRY(
        inflate_chunks(compressed, source, [&](std::string_view chunk, uint64_t) -> Result<void> {
            out += chunk;
            return {};
        }));
    return out;
}

std::string gzip(std::string_view raw, int level) {
    return gzip(std::span<const std::string_view>(&raw, 1), level);
}

std::string gzip(std::span<const std::string_view> pieces, int level) {
    DeflateStream z(level);
    size_t raw_size = 0;
    for (std::string_view piece : pieces) {
        raw_size += piece.size();
    }
    // Room for a small input's whole output; a larger one doubles it as it fills, which
    // costs little next to deflate itself and ends near the compressed size, not the bound.
    std::string out(std::min<size_t>(deflateBound(&z.stream, raw_size) + 64, 1u << 20), '\0');
    size_t piece = 0;
    auto* next = pieces.empty() ? nullptr : reinterpret_cast<const Bytef*>(pieces[0].data());
    size_t left = pieces.empty() ? 0 : pieces[0].size();
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        while (left == 0 && piece + 1 < pieces.size()) { // the next piece
            ++piece;
            next = reinterpret_cast<const Bytef*>(pieces[piece].data());
            left = pieces[piece].size();
        }
        // zlib counts in uInt: feed the input, and offer the output, in slices.
        auto slice = static_cast<uInt>(std::min(left, max_slice));
        z.stream.next_in = const_cast<Bytef*>(next);
        z.stream.avail_in = slice;
        next += slice;
        left -= slice;
        int flush = left == 0 && piece + 1 >= pieces.size() ? Z_FINISH : Z_NO_FLUSH;
        do {
            size_t produced = z.stream.total_out;
            if (produced == out.size()) {
                out.resize(out.size() * 2);
            }
            z.stream.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
            z.stream.avail_out = static_cast<uInt>(std::min(out.size() - produced, max_slice));
            rc = deflate(&z.stream, flush);
            if (rc == Z_STREAM_ERROR) {
                throw std::runtime_error("gzip: deflate failed");
            }
            // Done with the slice when deflate left output room: it took all input then.
        } while (z.stream.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    }
    out.resize(z.stream.total_out);
    return out;
}

} // namespace heapkit
