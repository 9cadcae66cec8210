// Text as the database and the terminal accept it: one character of a byte
// string classified as printable UTF-8, a control character (C0, DEL, C1;
// newline, tab and CR count as printable in multi-line text), invalid
// UTF-8 (bad lead or continuation byte, overlong form, surrogate, past
// U+10FFFF) or a sequence cut off by the end. Pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace ssmtune {

enum class CharKind { kPrintable, kControl, kInvalid, kTruncated };

struct TextChar {
  size_t len = 1;  // bytes of the character (1 for kInvalid and kTruncated)
  CharKind kind = CharKind::kPrintable;
};

// The character starting at byte i (< s.size()).
TextChar classify_char(std::string_view s, size_t i, bool multiline);

}  // namespace ssmtune
