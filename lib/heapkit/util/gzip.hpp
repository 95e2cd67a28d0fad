// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace heapkit {

// True when the bytes start with the gzip magic 0x1f 0x8b.
bool is_gzip(std::string_view bytes);

// The most one gzip input may inflate to unless raised: 2 GiB, five times the largest
// dump measured (BENCHMARKS.md: 400 MB of text for 10 M stacks, whose conversion already
// takes 4.7 GB); gzip compresses dumps 10-20x, deflate up to 1032x, so without a bound a
// few megabytes could ask for gigabytes.
constexpr uint64_t default_max_inflated = uint64_t{2} << 30;
// Within that default, an input that has inflated past `bomb_ratio_from` to more than
// `bomb_ratio` times the compressed bytes read so far is refused as a bomb at that point:
// a 9 MB bomb would otherwise be held whole (2 GB) before anything could refuse it. Real
// dumps at gzip -9 inflate 6-57x (Python with 48 threads, redis, the fixtures) and 104x
// at most (a program 140 frames deep in one recursive function): 200 leaves twice that.
constexpr uint64_t bomb_ratio = 200;
constexpr uint64_t bomb_ratio_from = uint64_t{64} << 20;

// How gunzip may inflate: at most `max_bytes` (when that is default_max_inflated, also
// no more than bomb_ratio times the compressed size past bomb_ratio_from); with `text`,
// the first inflated chunk (64 KiB) must hold no NUL byte, so binary data is refused
// before more is inflated.
struct GunzipLimits {
    uint64_t max_bytes = default_max_inflated;
    bool text = false;
    // With `text`: binary data this accepts from its first chunk is taken too (a binary
    // format the caller reads as well); null: none.
    bool (*binary_ok)(std::string_view first_chunk) = nullptr;
};

// Inflates every gzip member in `compressed` (concatenated members, as `cat a.gz b.gz`
// makes, are joined). `source` names the input in error messages. Inflation stops with
// an error as soon as it passes `limits`, before anything is kept: a refused input costs
// one 64 KiB chunk of memory, an accepted one its inflated size.
Result<std::string> gunzip(std::string_view compressed, std::string_view source,
                           const GunzipLimits& limits = {});

// Deflates `raw` into one gzip member at zlib `level` (0-9).
std::string gzip(std::string_view raw, int level);
// Deflates `pieces`, one after another, into one gzip member (nothing joined first).
std::string gzip(std::span<const std::string_view> pieces, int level);

} // namespace heapkit
