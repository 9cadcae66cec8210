// classify_char: lengths and kinds of ASCII, UTF-8 of every length, controls
// (C0, DEL, C1), and the malformed forms.
#include "core/text.h"

#include <catch2/catch.hpp>
#include <string>

namespace ssmtune {
namespace {

TextChar at0(const std::string& s, bool multiline = false) {
  return classify_char(s, 0, multiline);
}

TEST_CASE("classify_char: printable characters of each length", "[core]") {
  CHECK(at0("a").kind == CharKind::kPrintable);
  CHECK(at0("\xc3\xa9").len == 2);                              // é
  CHECK(at0("\xe2\x82\xac").len == 3);                          // €
  CHECK(at0("\xf0\x9f\x98\x80").len == 4);                      // U+1F600
  CHECK(at0("\xf4\x8f\xbf\xbf").kind == CharKind::kPrintable);  // U+10FFFF
}

TEST_CASE("classify_char: controls, with newlines only in multi-line text", "[core]") {
  CHECK(at0("\x1b").kind == CharKind::kControl);
  CHECK(at0("\x7f").kind == CharKind::kControl);
  CHECK(at0("\n").kind == CharKind::kControl);
  CHECK(at0("\n", true).kind == CharKind::kPrintable);
  const TextChar c1 = at0("\xc2\x85");  // NEL, a C1 control
  CHECK(c1.kind == CharKind::kControl);
  CHECK(c1.len == 2);
}

TEST_CASE("classify_char: malformed UTF-8", "[core]") {
  CHECK(at0("\x80").kind == CharKind::kInvalid);              // a lone continuation byte
  CHECK(at0("\xc3\x28").kind == CharKind::kInvalid);          // bad continuation
  CHECK(at0("\xc0\xaf").kind == CharKind::kInvalid);          // overlong '/'
  CHECK(at0("\xed\xa0\x80").kind == CharKind::kInvalid);      // a surrogate
  CHECK(at0("\xf4\x90\x80\x80").kind == CharKind::kInvalid);  // past U+10FFFF
  CHECK(at0("\xff").kind == CharKind::kInvalid);
  const TextChar cut = at0("\xe2\x82");
  CHECK(cut.kind == CharKind::kTruncated);
  CHECK(cut.len == 1);
  CHECK(classify_char("ab\xe2", 2, false).kind == CharKind::kTruncated);
}

}  // namespace
}  // namespace ssmtune
