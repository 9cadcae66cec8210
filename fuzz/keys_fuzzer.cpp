// libFuzzer target: problem and kernel config keys of every family. Input
// "PROBLEM\nCONFIG". A problem key that parses (any family, through the
// registry) is canonical and parses again to an equal problem; a config key
// the family accepts is canonical; a legal pair goes through the family's
// plan (forward and backward), which must not crash or overflow (UBSan)
// whatever the sizes; and the database's record checks agree.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache/record_checks.h"
#include "jit/device.h"
#include "tuner/bwd/config.h"
#include "tuner/bwd/plan.h"
#include "tuner/bwd/problem.h"
#include "tuner/family.h"
#include "tuner/fwd/config.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/problem.h"

namespace {

[[noreturn]] void fail(const std::string& why) {
  fprintf(stderr, "keys_fuzzer: %s\n", why.c_str());
  std::abort();
}

// The family-specific round trips and plans, beyond the registry's view.
void family_checks(const std::string& pk, const std::string& ck, bool legal) {
  if (auto p = ssmtune::FwdProblem::from_key(pk)) {
    if (!p->validate()) fail("a parsed forward problem does not validate: " + pk);
    auto p2 = ssmtune::FwdProblem::from_key(p->key());
    if (!p2 || !(*p2 == *p)) fail("forward problem key does not round-trip: " + pk);
    (void)p->min_bytes();
    (void)p->family_key();
    auto c = ssmtune::FwdConfig::from_key(ck);
    if (c && c->key() != ck) fail("forward config key not canonical: '" + ck + "'");
    if (c && legal) {
      (void)ssmtune::plan_fwd(*p, *c);
      (void)ssmtune::traits_expression(*p, *c);
    }
  }
  if (auto p = ssmtune::bwd::BwdProblem::from_key(pk)) {
    auto p2 = ssmtune::bwd::BwdProblem::from_key(p->key());
    if (!p2 || !(*p2 == *p)) fail("backward problem key does not round-trip: " + pk);
    (void)p->min_bytes();
    auto c = ssmtune::bwd::BwdConfig::from_key(ck);
    if (c && c->key() != ck) fail("backward config key not canonical: '" + ck + "'");
    if (c && legal) (void)ssmtune::bwd::plan_bwd(*p, *c);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  const std::string pk = in.substr(0, nl);
  const std::string ck = nl == std::string::npos ? in : in.substr(nl + 1);

  bool legal = false;
  auto parsed = ssmtune::parse_any_problem(pk);
  if (parsed) {
    const std::string key = parsed->problem->key();
    auto again = ssmtune::parse_any_problem(key);
    if (!again || again->problem->key() != key)
      fail("problem key does not round-trip: '" + pk + "' -> '" + key + "'");
    (void)parsed->problem->class_key();
    (void)parsed->problem->distance(*again->problem);
    auto canonical = parsed->family->canonical_config(ck);
    if (canonical && *canonical != ck)
      fail("config key not canonical: '" + ck + "' -> '" + *canonical + "'");
    legal = canonical && parsed->family->check_config(*parsed->problem, ck, {}).is_ok();
  }
  family_checks(pk, ck, legal);

  // The database refuses exactly the illegal pairs of known families.
  ssmtune::Measurement m;
  m.device_uuid = "GPU-x";
  m.problem_key = pk;
  m.config_key = ck;
  m.timestamp = 1700000000;
  const bool accepted = ssmtune::cache::check_measurement(m, "m", false, 1700000000).is_ok();
  if (parsed && accepted != legal)
    fail("record check disagrees with the family on '" + pk + "' / '" + ck + "'");
  return 0;
}
