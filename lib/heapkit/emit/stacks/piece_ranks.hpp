// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/stacks/token_table.hpp"

#include <cstdint>
#include <vector>

// The ranks LineSpeller sorts lines by (stack_lines.hpp says why pieces): every token's
// two pieces, "text;" (inner) and "text" (the line's last), ranked among all pieces
// sorted bytewise; equal pieces rank alike.
//
// How address tokens are ranked without their texts. Every address piece of a prefix P
// starts with G = P "0x": all of them sit in one stretch of the bytewise order, and when
// no prefix's G starts with another's the stretches follow their G's order. Inside one,
// a piece is hex digits and maybe ';': tokens sorted by (digits left-aligned in 64 bits,
// digit count) come in their "text" pieces' order, and "h;" goes after everything
// extending h by a digit ('0'-'9' < ';') and before everything extending it by a letter
// ('a'-'f' > ';'): one walk of the sorted tokens with a stack of the open ones places it.
// String tokens are sorted as strings and merged in; those starting with a G are
// compared with that G's pieces spelled (in practice none). Prefixes whose G's nest (a
// module named "a+0x1" beside "a"): every piece sorted as spelled, two at a time.
namespace heapkit {

// A token's two ranks side by side: the ranking writes them, and lines are compared
// by them, in no order of tokens (a cache miss each in a big profile): one miss, not two.
struct TokenRanks {
    uint32_t inner = 0; // the rank of "text;"
    uint32_t last = 0;  // the rank of "text"
};

struct PieceRanks {
    std::vector<TokenRanks> of_token;
    uint32_t count = 0; // distinct pieces: every rank is below it
};

PieceRanks rank_pieces(const TokenTable& tokens);

// rank_pieces by spelling every piece and sorting them as strings: the reference, and
// what rank_pieces falls back to.
PieceRanks rank_pieces_spelled(const TokenTable& tokens);

} // namespace heapkit
