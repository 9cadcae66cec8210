// One UTF-8 character's length and kind (core/text.h).
#include "core/text.h"

namespace ssmtune {

TextChar classify_char(std::string_view s, size_t i, bool multiline) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned c = b[i];
  if (c < 0x80) {
    const bool ok =
        (c >= 0x20 && c != 0x7f) || (multiline && (c == '\n' || c == '\t' || c == '\r'));
    return {1, ok ? CharKind::kPrintable : CharKind::kControl};
  }
  // A sequence's length and the smallest code point it may encode.
  size_t len;
  unsigned cp;
  if ((c & 0xe0) == 0xc0) {
    len = 2, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, cp = c & 0x07;
  } else {
    return {1, CharKind::kInvalid};
  }
  if (i + len > s.size()) return {1, CharKind::kTruncated};
  for (size_t k = 1; k < len; ++k) {
    if ((b[i + k] & 0xc0) != 0x80) return {1, CharKind::kInvalid};
    cp = (cp << 6) | (b[i + k] & 0x3f);
  }
  static constexpr unsigned kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return {1, CharKind::kInvalid};
  if (cp < 0xa0) return {len, CharKind::kControl};  // C1 controls
  return {len, CharKind::kPrintable};
}

}  // namespace ssmtune
