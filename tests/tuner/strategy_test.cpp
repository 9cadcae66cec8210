// Each strategy on recorded measurements: a table of config -> time stands
// in for the GPU, and records what was asked at which fidelity; a fake clock
// that each measurement advances stands in for the wall time.
#include "tuner/strategy.h"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace ssmtune {
namespace {

struct Recorded {
  std::map<std::string, TrialResult> table;
  std::vector<std::pair<std::string, double>> asked;  // (config, target_ms)

  MeasureFn fn() {
    return [this](const std::string& c, double t) {
      asked.push_back({c, t});
      return table.at(c);
    };
  }
};

std::vector<std::string> configs(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("cfg" + std::to_string(16 + i));  // distinct keys
  return out;
}

Recorded record(const std::vector<std::string>& cs) {
  Recorded r;
  for (size_t i = 0; i < cs.size(); ++i) {
    // Times 1.0, 0.9, ... with a dip at index 13 (the best) and a failure at 5.
    TrialResult t{true, 1.0 + 0.01 * static_cast<double>((i * 7) % cs.size()), 0.001};
    if (i == 13) t.median_ms = 0.5;
    if (i == 5) t = {false, 0, 0};
    r.table[cs[i]] = t;
  }
  return r;
}

TEST_CASE("exhaustive measures every config carefully, up to the budget", "[tuner]") {
  const auto cs = configs(37);
  Recorded r = record(cs);
  Budget b;
  auto all = run_exhaustive(cs, r.fn(), b);
  CHECK(all.size() == cs.size());
  for (const auto& [k, t] : r.asked) CHECK(t == b.careful_ms);
  b.max_configs = 10;
  Recorded r2 = record(cs);
  CHECK(run_exhaustive(cs, r2.fn(), b).size() == 10);
}

TEST_CASE("random sampling takes a budget-sized sample without repeats", "[tuner]") {
  const auto cs = configs(37);
  Recorded r = record(cs);
  Budget b;
  b.max_configs = 12;
  auto trials = run_random(cs, r.fn(), b, 42);
  REQUIRE(trials.size() == 12);
  std::set<std::string> keys;
  for (const auto& t : trials) keys.insert(t.config);
  CHECK(keys.size() == 12);
  // Another seed, another sample; the same seed, the same one.
  Recorded r2 = record(cs), r3 = record(cs);
  auto again = run_random(cs, r2.fn(), b, 42);
  auto other = run_random(cs, r3.fn(), b, 7);
  CHECK(again[0].config == trials[0].config);
  bool differs = false;
  for (size_t i = 0; i < other.size(); ++i) differs |= other[i].config != trials[i].config;
  CHECK(differs);
}

TEST_CASE("successive halving times many cheaply and the best carefully", "[tuner]") {
  const auto cs = configs(64);
  Recorded r = record(cs);
  Budget b;
  b.cheap_ms = 5;
  b.careful_ms = 100;
  auto trials = run_halving(cs, r.fn(), b, 4);
  // Every config once at the cheapest fidelity.
  int cheap = 0;
  for (const auto& [k, t] : r.asked) cheap += t == b.cheap_ms;
  CHECK(cheap == 64);
  // Fewer careful measurements than configs, and the best among them.
  int careful = 0;
  bool best_careful = false;
  for (const auto& t : trials) {
    if (t.target_ms == b.careful_ms) {
      ++careful;
      best_careful |= t.config == cs[13];
      CHECK(t.config != cs[5]);  // a failed config is never promoted
    }
  }
  CHECK(careful >= 1);
  CHECK(careful < 64);
  CHECK(best_careful);
  CHECK(trials.size() < 2 * cs.size());
}

TEST_CASE("a wall-time budget stops the first look but not the final measurements", "[tuner]") {
  const auto cs = configs(50);
  Recorded r = record(cs);
  Budget b;
  b.max_configs = 20;  // stands in for the clock
  auto trials = run_halving(cs, r.fn(), b, 4);
  int rung0 = 0;
  for (const auto& t : trials) rung0 += t.rung == 0;
  CHECK(rung0 == 20);
  CHECK(trials.back().target_ms == b.careful_ms);
}

// A clock each measurement advances by a fixed cost plus its fidelity.
struct FakeClock {
  double now = 0;
  double overhead_s = 0.05;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

TEST_CASE("halving under a time limit keeps room for its later rungs", "[tuner]") {
  const auto cs = configs(400);
  Recorded r = record(cs);
  FakeClock clock;
  Budget b;
  b.max_seconds = 8;
  b.clock = clock.fn();
  MeasureFn fn = [&](const std::string& c, double t) {
    clock.now += clock.overhead_s + t / 1e3;
    return r.table.at(c);
  };
  auto trials = run_halving(cs, fn, b, 4);
  int rung0 = 0;
  for (const auto& t : trials) rung0 += t.rung == 0;
  INFO("first looks " << rung0 << ", all " << trials.size() << ", " << clock.now << " s");
  // Most of the time goes to first looks, the rest fits: the final rung is careful.
  CHECK(rung0 > 80);
  CHECK(rung0 < 400);
  CHECK(clock.now <= b.max_seconds + 1e-9);
  CHECK(trials.back().target_ms == b.careful_ms);
  // The estimate it planned with is what the later rungs cost.
  const double later = halving_later_cost(rung0, clock.overhead_s, b, 4);
  double spent = 0;
  for (const auto& t : trials)
    if (t.rung > 0) spent += clock.overhead_s + t.target_ms / 1e3;
  CHECK(spent <= later + 1e-9);
}

TEST_CASE("one slow first look (a worker restarted after a fault) does not shrink the rest",
          "[tuner]") {
  const auto cs = configs(400);
  Recorded r = record(cs);
  FakeClock clock;
  Budget b;
  b.max_seconds = 12;
  b.clock = clock.fn();
  int n = 0;
  MeasureFn fn = [&](const std::string& c, double t) {
    clock.now += (n++ == 1 ? 5.0 : clock.overhead_s) + t / 1e3;
    return r.table.at(c);
  };
  auto trials = run_halving(cs, fn, b, 4);
  int rung0 = 0;
  for (const auto& t : trials) rung0 += t.rung == 0;
  INFO("first looks " << rung0 << ", " << clock.now << " s");
  CHECK(rung0 > 80);  // as many as 7 s of plain looks give
  CHECK(clock.now <= b.max_seconds + 1e-9);
  CHECK(trials.back().target_ms == b.careful_ms);
}

TEST_CASE("the first look is never cut by time; a stop ends everything", "[tuner]") {
  const auto cs = configs(10);
  Recorded r = record(cs);
  FakeClock clock;
  clock.now = 50;
  Budget b;
  b.max_seconds = 1e-6;
  double start = 0;
  b.clock = [&clock, &start] { return clock.now + start; };
  MeasureFn fn = [&](const std::string& c, double t) {
    start += 10;  // every measurement far over the budget
    return r.fn()(c, t);
  };
  auto h = run_halving(cs, fn, b, 4);
  REQUIRE(!h.empty());
  CHECK(h[0].config == cs[0]);
  CHECK(h[0].rung == 0);
  CHECK(h.size() <= 2);
  auto e = run_exhaustive(cs, fn, b);
  REQUIRE(e.size() == 1);
  CHECK(e[0].config == cs[0]);
  b.stop = [] { return true; };
  CHECK(run_halving(cs, fn, b, 4).empty());
  CHECK(run_exhaustive(cs, fn, b).empty());
}

// A source whose candidates become ready one per `next` call after a wait.
class TrickleSource final : public CandidateSource {
 public:
  explicit TrickleSource(std::vector<std::string> cs) : cs_(std::move(cs)) {}
  std::optional<std::string> next(const std::function<bool()>& give_up) override {
    ++asked;
    if (give_up && give_up()) return std::nullopt;
    if (i_ >= cs_.size()) return std::nullopt;
    return cs_[i_++];
  }
  void close() override { closed = true; }
  int asked = 0;
  bool closed = false;

 private:
  std::vector<std::string> cs_;
  size_t i_ = 0;
};

TEST_CASE("strategies pull from a source and close it when done pulling", "[tuner]") {
  const auto cs = configs(30);
  Recorded r = record(cs);
  Budget b;
  b.max_configs = 12;
  TrickleSource s(cs);
  auto trials = run_halving(s, r.fn(), b, 4);
  CHECK(s.closed);
  int rung0 = 0;
  for (const auto& t : trials) rung0 += t.rung == 0;
  CHECK(rung0 == 12);
  TrickleSource e(cs);
  CHECK(run_exhaustive(e, r.fn(), b).size() == 12);
  CHECK(e.closed);
}

TEST_CASE("the halving estimate grows with the first looks and the overhead", "[tuner]") {
  Budget b;
  CHECK(halving_later_cost(0, 0.1, b) == 0);
  CHECK(halving_later_cost(1, 0.1, b) == Approx(0.1 + b.careful_ms / 1e3));
  CHECK(halving_later_cost(100, 0.1, b) > halving_later_cost(20, 0.1, b));
  CHECK(halving_later_cost(100, 0.2, b) > halving_later_cost(100, 0.1, b));
}

}  // namespace
}  // namespace ssmtune
