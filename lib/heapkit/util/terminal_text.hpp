// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace heapkit {

// `text` safe to print on a terminal: every control character (bytes below 0x20, DEL
// 0x7f) is written as "\xHH" ("\x1b", "\x07") and every C1 control (U+0080-U+009F) as
// "\u00HH", as names and paths come from the process profiled: ESC would let one
// recolour, retitle or rewrite the user's terminal. Bytes that are not UTF-8 become
// U+FFFD. Text without any is returned as it is. (A backslash is left alone: names
// rarely hold one, and then they read as they are.)
std::string terminal_safe(std::string_view text);
// The same for text of several lines (a server's error message): newlines and tabs stay.
std::string terminal_safe_lines(std::string_view text);

} // namespace heapkit
