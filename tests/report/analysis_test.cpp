// Eligibility, the one measurement per config, the Pareto front, failure
// reasons, the tuning curve and heatmap cells.
#include "report/analysis.h"

#include <catch2/catch.hpp>

#include <random>

namespace ssmtune::report {
namespace {

Measurement ok(const std::string& config, double ms, double err, int64_t t = 0, int repeats = 10) {
  Measurement m;
  m.config_key = config;
  m.status = "ok";
  m.median_ms = ms;
  m.errors = {{"out", err}};
  m.budget = 1e-4;
  m.verdict = "inside";
  m.timestamp = t;
  m.repeats = repeats;
  return m;
}

}  // namespace

TEST_CASE("eligible: ok, inside a positive budget, all written", "[report]") {
  CHECK(eligible(ok("a", 1, 1e-5)));
  CHECK_FALSE(eligible(ok("a", 1, 2e-4)));
  Measurement m = ok("a", 1, 1e-5);
  m.verdict = "defect";
  CHECK_FALSE(eligible(m));
  m = ok("a", 1, 1e-5);
  m.bad_elements = 1;
  CHECK_FALSE(eligible(m));
  m = ok("a", 1, 1e-5);
  m.budget = 0;
  CHECK_FALSE(eligible(m));
  m = ok("a", 1, 1e-5);
  m.status = "inaccurate";
  CHECK_FALSE(eligible(m));
}

TEST_CASE("per_config: current only, the most careful measurement", "[report]") {
  std::vector<Measurement> ms = {ok("a", 1, 0, 1, 5), ok("a", 2, 0, 2, 31), ok("a", 3, 0, 3, 31),
                                 ok("b", 4, 0, 1), ok("c", 5, 0, 1)};
  ms[4].stale = true;
  std::vector<const Measurement*> in;
  for (const auto& m : ms) in.push_back(&m);
  const auto out = per_config(in);
  REQUIRE(out.size() == 2);
  CHECK(out[0]->config_key == "a");
  CHECK(out[0]->median_ms == 3);  // most repeats, then the newer
  CHECK(out[1]->config_key == "b");
}

TEST_CASE("pareto_front: no point beaten in both coordinates", "[report]") {
  CHECK(pareto_front({}).empty());
  //            0        1         2        3         4         5 (duplicate of 1)
  const std::vector<XY> pts = {{1, 10}, {2, 5}, {3, 6}, {4, 1}, {0.5, 20}, {2, 5}};
  const auto f = pareto_front(pts);
  CHECK(f == std::vector<size_t>{4, 0, 1, 3});

  // Seeded random points: the front is exactly the set of undominated points.
  const uint64_t seed = 12345;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<XY> r(97);
  for (auto& p : r) p = {u(rng), u(rng)};
  const auto front = pareto_front(r);
  for (size_t i = 0; i < r.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < r.size(); ++j)
      dominated = dominated || (j != i && r[j].x <= r[i].x && r[j].y <= r[i].y &&
                                (r[j].x < r[i].x || r[j].y < r[i].y));
    const bool on = std::find(front.begin(), front.end(), i) != front.end();
    CHECK(on == !dominated);
  }
  for (size_t k = 1; k < front.size(); ++k) {
    CHECK(r[front[k]].x > r[front[k - 1]].x);
    CHECK(r[front[k]].y < r[front[k - 1]].y);
  }
}

TEST_CASE("failure reasons group by their text without the numbers", "[report]") {
  CHECK(reason_class("pruned", "shared memory 70000 B > 49152 B") ==
        "pruned: shared memory # B > # B");
  CHECK(reason_class("compile_failed", "error: bad thing\nlog line 2") ==
        "compile_failed: error: bad thing");
  CHECK(reason_class("faulted", "") == "faulted");
  CHECK(reason_class("pruned", "regs 1.5e3 over") == "pruned: regs # over");
  std::vector<Measurement> ms(5);
  ms[0].status = ms[1].status = ms[2].status = "pruned";
  ms[0].detail = "smem 1 > 2";
  ms[1].detail = "smem 3 > 2";
  ms[2].detail = "threads 1024";
  ms[3] = ok("a", 1, 0);
  ms[4].status = "inaccurate";
  ms[4].verdict = "defect";
  std::vector<const Measurement*> in;
  for (const auto& m : ms) in.push_back(&m);
  const auto counts = failure_counts(in);
  REQUIRE(counts.size() == 3);
  CHECK(counts[0] == std::pair<std::string, int>{"pruned: smem # > #", 2});
}

TEST_CASE("tuning curve: best eligible so far against elapsed time", "[report]") {
  std::vector<Measurement> ms = {ok("a", 5, 1e-6, 100), ok("b", 7, 1e-6, 103),
                                 ok("c", 1, 1e-3, 104),  // over budget: not an improvement
                                 ok("d", 3, 1e-6, 110), ok("e", 4, 1e-6, 130)};
  std::vector<const Measurement*> in;
  for (const auto& m : ms) in.push_back(&m);
  const auto c = tuning_curve(in);
  REQUIRE(c.size() == 3);
  CHECK(c[0].elapsed_s == 0);
  CHECK(c[0].best_ms == 5);
  CHECK(c[1].elapsed_s == 10);
  CHECK(c[1].best_ms == 3);
  CHECK(c[1].config == "d");
  CHECK(c[2].elapsed_s == 30);  // the end of the run
  CHECK(c[2].best_ms == 3);
  CHECK(tuning_curve({}).empty());

  // A resumed tune a day later: the pause counts as no time.
  ms.push_back(ok("f", 2, 1e-6, 100000));
  ms.push_back(ok("g", 2.5, 1e-6, 100005));
  in.clear();
  for (const auto& m : ms) in.push_back(&m);
  const auto r = tuning_curve(in);
  REQUIRE(r.size() == 4);
  CHECK(r[2].elapsed_s == 30);
  CHECK(r[2].best_ms == 2);
  CHECK(r[3].elapsed_s == 35);
}

TEST_CASE("heat cells: the fastest eligible config per (algo, K, D)", "[report]") {
  std::vector<Measurement> ms = {ok("seq.K64.D8.fp32.t128.i8.s1.fast", 2, 1e-6),
                                 ok("seq.K64.D8.fp64.t128.i8.s1.fast", 1.5, 1e-6),
                                 ok("seq.K32.D8.fp32.t128.i8.s1.fast", 3, 1e-6),
                                 ok("warpscan.K64.D4.fp32.t128.i8.s1.fast", 1, 1e-3),
                                 ok("garbage", 1, 1e-6)};
  std::vector<const Measurement*> in;
  for (const auto& m : ms) in.push_back(&m);
  const auto cells = heat_cells("fwd", in);
  REQUIRE(cells.size() == 1);  // warpscan's only one is over budget
  const auto& seq = cells.at("seq");
  REQUIRE(seq.size() == 2);
  CHECK(seq[0].chunk == 32);
  CHECK(seq[1].chunk == 64);
  CHECK(seq[1].best_ms == 1.5);
  CHECK(seq[1].configs == 2);
}

}  // namespace ssmtune::report
