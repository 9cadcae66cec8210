// Property: for randomly built databases (seeded; SSMTUNE_TEST_SEED replays
// one), export -> import into a fresh database -> export gives the same
// bytes (the exported_at stamp aside).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <random>

#include "cache/db_fixtures.h"
#include "cache/json_text.h"
#include "cache/tuning_db.h"
#include "tuner/fwd/plan.h"

namespace ssmtune::cache {
namespace {

using testing::TempDir;

std::string export_text(TuningDb& db) {
  auto j = db.export_json();
  REQUIRE(j.is_ok());
  j->erase("exported_at");
  return dump_json_text(*j);
}

// (problem, config) pairs that are legal together, for ok measurements
// and best entries: forward ones and two backward ones.
std::vector<std::pair<std::string, std::string>> legal_pairs() {
  std::vector<std::pair<std::string, std::string>> out;
  for (int p = 0; p < 4; ++p)
    for (int c = 0; c < 15; ++c) {
      auto pk = testing::problem_key(p, p % 2 ? DType::kBF16 : DType::kF32);
      auto ck = testing::config_key(c);
      if (check_config(*FwdProblem::from_key(pk), *FwdConfig::from_key(ck)).is_ok())
        out.emplace_back(pk, ck);
    }
  out.emplace_back("bwd:b2.d48.l17.n16.g1.fp32", "seq.K32.D8.fp32.t32.s4.fast");
  out.emplace_back("bwd:b2.d48.l33.n16.g1.bf16.D.z", "seq.K16.D16.fp32.t32.s2.fast");
  return out;
}

// Errors for the outputs `names`, with random values.
std::vector<OutputError> random_errors(std::mt19937_64& rng, const std::vector<std::string>& names);

double random_number(std::mt19937_64& rng, bool error_measure) {
  switch (rng() % 6) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return error_measure ? std::numeric_limits<double>::infinity() : 0.0;
    case 2:
      return std::uniform_real_distribution<double>(0, 1e-9)(rng);
    default:
      return std::uniform_real_distribution<double>(0, error_measure ? 1.0 : 1e4)(rng);
  }
}

std::string random_text(std::mt19937_64& rng) {
  static const char* const kPieces[] = {
      "H200", " ", "\xc3\xa9", "\xe2\x9c\x93", "\"q\"", "\\", "x", "\xf0\x9f\x9a\x80", ",", "9"};
  std::string s;
  for (int i = static_cast<int>(rng() % 6); i > 0; --i) s += kPieces[rng() % 10];
  return s;
}

std::vector<OutputError> random_errors(std::mt19937_64& rng,
                                       const std::vector<std::string>& names) {
  std::vector<OutputError> out;
  for (const std::string& n : names) {
    if (rng() % 4 == 0) continue;  // an output left unscored
    OutputError e;
    e.output = n;
    e.rel_l2 = random_number(rng, true);
    e.max_abs_rel = random_number(rng, true);
    e.max_rel = random_number(rng, true);
    e.nan_inf = static_cast<int64_t>(rng() % 3) * int64_t{1 << 20} * 4096;
    e.unwritten = static_cast<int64_t>(rng() % 2);
    e.budget = random_number(rng, true);
    e.verdict = random_text(rng);
    out.push_back(std::move(e));
  }
  return out;
}

void fill(TuningDb& db, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pairs = legal_pairs();
  REQUIRE(pairs.size() > 4);
  const int n_dev = 1 + static_cast<int>(rng() % 3);
  std::vector<std::string> uuids;
  for (int d = 0; d < n_dev; ++d) {
    DeviceRecord r = testing::sample_device(d);
    r.name = random_text(rng);
    r.sm_count = static_cast<int>(rng() % 200);
    r.driver_version = static_cast<int>(rng() % 20000);
    REQUIRE(db.upsert_device(r).is_ok());
    uuids.push_back(r.uuid);
  }
  std::vector<Measurement> ms;
  const int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    const auto& [pk, ck] = pairs[rng() % pairs.size()];
    Measurement m =
        testing::sample_measurement(uuids[rng() % uuids.size()], pk, ck, random_number(rng, false));
    const bool backward = pk.rfind("bwd:", 0) == 0;
    m.family = backward ? "bwd" : "fwd";
    m.status = kAllMeasureStatuses[rng() % 6];
    m.spread_ms = random_number(rng, false);
    m.min_ms = random_number(rng, false);
    m.errors = random_errors(rng, backward ? std::vector<std::string>{"du", "ddelta", "dA", "dB"}
                                           : std::vector<std::string>{"out", "out_z"});
    summarize_errors(m);
    if (rng() % 3 == 0) m.rel_l2 = random_number(rng, true);  // a headline of its own
    m.detail = random_text(rng) + (rng() % 2 ? "\nline 2" : "");
    // Unique per row: import drops a row whose (device, problem, config,
    // timestamp, template hash) it already holds, also within one file.
    m.timestamp = 1600000000 + i * 7 + static_cast<int64_t>(rng() % 7);
    m.registers = static_cast<int>(rng() % 256);
    ms.push_back(m);
  }
  REQUIRE(db.add_measurements(ms).is_ok());
  for (int i = static_cast<int>(rng() % 6); i > 0; --i) {
    const auto& [pk, ck] = pairs[rng() % pairs.size()];
    BestEntry b = testing::sample_best(uuids[rng() % uuids.size()], pk, ck,
                                       1600000000 + static_cast<int64_t>(rng() % 1000),
                                       "h" + std::to_string(rng() % 3), random_text(rng));
    b.family = pk.rfind("bwd:", 0) == 0 ? "bwd" : "fwd";
    b.median_ms = std::uniform_real_distribution<double>(0, 10)(rng);
    b.spread_ms = random_number(rng, false);
    b.rel_l2 = random_number(rng, true);
    REQUIRE(db.set_best(b).is_ok());
  }
}

TEST_CASE("export, import, export is byte-identical for random databases", "[cache][property]") {
  uint64_t base = std::random_device{}();
  if (const char* s = std::getenv("SSMTUNE_TEST_SEED")) base = std::strtoull(s, nullptr, 10);
  for (uint64_t k = 0; k < 25; ++k) {
    const uint64_t seed = base + k;
    INFO("seed " << seed << " (SSMTUNE_TEST_SEED=" << base << " replays this run)");
    TempDir dir;
    auto a = TuningDb::open(dir.file("a.db"), OpenMode::kReadWrite);
    REQUIRE(a.is_ok());
    fill(*a, seed);
    const std::string first = export_text(*a);
    auto j = parse_json_text(first, "export");
    REQUIRE(j.is_ok());
    for (MergePolicy policy : {MergePolicy::kIncomingWins, MergePolicy::kNewerWins}) {
      TempDir dir2;
      auto b = TuningDb::open(dir2.file("b.db"), OpenMode::kReadWrite);
      REQUIRE(b.is_ok());
      auto r = b->import_json(*j, policy);
      INFO(r.status().to_string());
      REQUIRE(r.is_ok());
      CHECK(export_text(*b) == first);
      // Importing again adds nothing and changes nothing.
      auto again = b->import_json(*j, policy);
      REQUIRE(again.is_ok());
      CHECK(again->measurements_added == 0);
      CHECK(export_text(*b) == first);
    }
  }
}

}  // namespace
}  // namespace ssmtune::cache
