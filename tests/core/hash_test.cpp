#include "core/hash.h"

#include <catch2/catch.hpp>

namespace ssmtune {
namespace {

TEST_CASE("hash is stable, 128-bit and length-delimited", "[core]") {
  CHECK(hash_hex("abc") == hash_hex("abc"));
  CHECK(hash_hex("abc").size() == 32);
  CHECK(hash_hex("abc") != hash_hex("abd"));
  CHECK(Hasher().add("ab").add("c").hex() != Hasher().add("a").add("bc").hex());
  // Pinned so that a change of the function (which would orphan every
  // cached cubin) is a deliberate one.
  CHECK(hash_hex("") == "9d30c1f78465995be47dda5e4e4e77ed");
  CHECK(hash_hex("ssmtune") == "c61b5f187aff0c326900a4b39840ff49");
}

}  // namespace
}  // namespace ssmtune
