// diff_models: per device class (GPU name) and problem.
#include "report/diff.h"

#include <catch2/catch.hpp>

namespace ssmtune::report {
namespace {

Model side(const std::vector<BestEntry>& best) {
  Model m;
  m.devices = {{"GPU-1", "NVIDIA H200", "sm_90", 132, "", ""},
               {"GPU-2", "NVIDIA H200", "sm_90", 132, "", ""},
               {"GPU-3", "NVIDIA H100", "sm_90", 114, "", ""}};
  m.best = best;
  return m;
}

BestEntry entry(const std::string& dev, const std::string& p, const std::string& c, double ms,
                int64_t t = 0, bool stale = false) {
  return {dev, p, c, ms, 0, 0, t, "", stale, ""};
}

}  // namespace

TEST_CASE("diff: changed, same, added and removed per GPU name", "[report]") {
  const Model a = side({entry("GPU-1", "p1", "c1", 1.0), entry("GPU-1", "p2", "c2", 2.0),
                        entry("GPU-1", "p3", "c3", 3.0), entry("GPU-3", "p1", "c1", 4.0)});
  // B ran on another H200 (GPU-2): the same class.
  const Model b = side({entry("GPU-2", "p1", "c9", 0.5), entry("GPU-2", "p2", "c2", 2.2),
                        entry("GPU-2", "p4", "c4", 1.0)});
  const auto rows = diff_models(a, b);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].device == "NVIDIA H100");
  CHECK(rows[0].change == "removed");
  CHECK(rows[1].problem == "p1");
  CHECK(rows[1].change == "changed");
  CHECK(rows[1].ratio == 0.5);
  CHECK(rows[2].change == "same");
  CHECK(rows[2].ratio == Approx(1.1));
  CHECK(rows[3].change == "removed");
  CHECK(rows[4].change == "added");
  CHECK(rows[4].ratio == 0);
  const DiffSummary s = summarize(rows);
  CHECK(s.changed == 1);
  CHECK(s.same == 1);
  CHECK(s.added == 1);
  CHECK(s.removed == 2);
}

TEST_CASE("diff: within a class a current entry stands before a stale one, then the newest",
          "[report]") {
  const Model a = side({entry("GPU-1", "p", "new-stale", 1.0, 200, true),
                        entry("GPU-2", "p", "old-current", 2.0, 100)});
  const Model b =
      side({entry("GPU-1", "p", "older", 1.0, 100), entry("GPU-2", "p", "newer", 3.0, 300)});
  const auto rows = diff_models(a, b);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].config_a == "old-current");
  CHECK_FALSE(rows[0].stale_a);
  CHECK(rows[0].config_b == "newer");
  CHECK(rows[0].ratio == 1.5);
  CHECK(diff_models(Model{}, Model{}).empty());
}

}  // namespace ssmtune::report
