// What import (and every write) refuses: out-of-range times, errors (each
// output's too) and counts, future timestamps, 64-bit values where the
// driver API has 32 bits, configs illegal for their problem in either
// family, control characters and invalid UTF-8.
#include "cache/record_checks.h"

#include <catch2/catch.hpp>
#include <climits>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"

namespace ssmtune::cache {
namespace {

using nlohmann::json;
using testing::config_key;
using testing::problem_key;
using testing::sample_device;
using testing::sample_measurement;
using testing::TempDir;

constexpr int64_t kNow = 1700000000;

Measurement good() {
  return sample_measurement(sample_device().uuid, problem_key(), config_key(), 0.5);
}

BestEntry good_best() {
  return testing::sample_best(sample_device().uuid, problem_key(), config_key(), kNow);
}

// A forward config key that parses but is illegal for every problem (chunk 0).
constexpr char kIllegalFwdConfig[] = "sequential.K0.D8.fp32.t128.i8.s1.fast";
// A backward problem, a config legal for it and one that is not (threads
// must be d_step * n_split).
constexpr char kBwdProblem[] = "bwd:b2.d48.l17.n16.g1.fp32";
constexpr char kLegalBwdConfig[] = "seq.K32.D8.fp32.t32.s4.fast";
constexpr char kIllegalBwdConfig[] = "seq.K32.D8.fp32.t64.s4.fast";

TEST_CASE("measurement checks refuse out-of-range values and name the field", "[cache][checks]") {
  CHECK(check_measurement(good(), "m", false, kNow).is_ok());
  struct Case {
    const char* field;
    void (*mutate)(Measurement&);
  };
  const Case cases[] = {
      {"median_ms", [](Measurement& m) { m.median_ms = -1; }},
      {"median_ms", [](Measurement& m) { m.median_ms = 1e308; }},
      {"median_ms", [](Measurement& m) { m.median_ms = std::numeric_limits<double>::infinity(); }},
      {"spread_ms", [](Measurement& m) { m.spread_ms = -0.5; }},
      {"min_ms", [](Measurement& m) { m.min_ms = -1e-9; }},
      {"rel_l2", [](Measurement& m) { m.rel_l2 = -1e-6; }},
      {"errors[0].max_rel", [](Measurement& m) { m.errors[0].max_rel = -1; }},
      {"errors[1].rel_l2", [](Measurement& m) { m.errors[1].rel_l2 = -1e-9; }},
      {"errors[0].budget", [](Measurement& m) { m.errors[0].budget = -2e-5; }},
      {"errors[0].nan_inf", [](Measurement& m) { m.errors[0].nan_inf = -1; }},
      {"errors[0].output", [](Measurement& m) { m.errors[0].output = ""; }},
      {"errors[0].output", [](Measurement& m) { m.errors[0].output = "out\n"; }},
      {"errors[1].verdict", [](Measurement& m) { m.errors[1].verdict = "in\x1b[31mside"; }},
      {"errors[1]", [](Measurement& m) { m.errors[1].output = m.errors[0].output; }},
      {"errors", [](Measurement& m) { m.errors.resize(kMaxOutputs + 1, m.errors[0]); }},
      {"error_budget", [](Measurement& m) { m.error_budget = -2e-5; }},
      {"repeats", [](Measurement& m) { m.repeats = -3; }},
      {"nan_inf", [](Measurement& m) { m.nan_inf = -1; }},
      {"unwritten", [](Measurement& m) { m.unwritten = -7; }},
      {"registers", [](Measurement& m) { m.registers = -1; }},
      {"shared_bytes", [](Measurement& m) { m.shared_bytes = -4096; }},
      {"timestamp", [](Measurement& m) { m.timestamp = INT64_MAX; }},
      {"timestamp", [](Measurement& m) { m.timestamp = kNow + 2 * kMaxClockSkewSeconds; }},
      {"timestamp", [](Measurement& m) { m.timestamp = -5; }},
      {"timestamp", [](Measurement& m) { m.timestamp = 0; }},
      {"config_key", [](Measurement& m) { m.config_key = kIllegalFwdConfig; }},
      {"config_key", [](Measurement& m) { m.config_key = "seq.K64"; }},
      {"config_key",
       [](Measurement& m) {
         m.problem_key = kBwdProblem;
         m.config_key = kIllegalBwdConfig;
       }},
      {"config_key",
       [](Measurement& m) {
         m.problem_key = kBwdProblem;
         m.config_key = config_key();  // a forward config for a backward problem
       }},
      {"problem_key", [](Measurement& m) { m.problem_key = "fwd:b1.d0.l1.n1.g1.fp32"; }},
      {"problem_key", [](Measurement& m) { m.problem_key = "b1.d4294967296.l1.n1.g1.fp32"; }},
      {"problem_key", [](Measurement& m) { m.problem_key = "bwd:b1.d8"; }},
      {"family", [](Measurement& m) { m.family = "fwd\x1b"; }},
      {"verdict", [](Measurement& m) { m.verdict = "in\x1b[31mside"; }},
      {"detail", [](Measurement& m) { m.detail = "bad \xff byte"; }},
  };
  for (const auto& c : cases) {
    Measurement m = good();
    c.mutate(m);
    const Status s = check_measurement(m, "measurements[2]", false, kNow);
    INFO(c.field << ": " << s.to_string());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(std::string("measurements[2].") + c.field) != std::string::npos);
  }
  // What is allowed: NaN (not measured), infinite errors (NaN output),
  // a detail over several lines, a small clock skew, 0 when stamping now.
  Measurement m = good();
  m.median_ms = std::numeric_limits<double>::quiet_NaN();
  m.rel_l2 = std::numeric_limits<double>::infinity();
  m.errors[0].rel_l2 = std::numeric_limits<double>::infinity();
  m.errors[1].max_rel = std::numeric_limits<double>::quiet_NaN();
  m.detail = "line 1\n\tline 2 \xc3\xa9";
  m.timestamp = kNow + 60;
  CHECK(check_measurement(m, "m", false, kNow).to_string() == "ok");
  m.timestamp = 0;
  CHECK(check_measurement(m, "m", true, kNow).to_string() == "ok");
  // A pruned config is recorded exactly because it is illegal.
  m = good();
  m.status = MeasureStatus::kPruned;
  m.config_key = kIllegalFwdConfig;
  CHECK(check_measurement(m, "m", false, kNow).to_string() == "ok");
  // The backward family's legal config; a family this build does not know
  // gets the generic key checks only.
  m = good();
  m.family = "bwd";
  m.problem_key = kBwdProblem;
  m.config_key = kLegalBwdConfig;
  CHECK(check_measurement(m, "m", false, kNow).to_string() == "ok");
  m.family = "";
  m.problem_key = "dec:b1.d8.w4";
  m.config_key = "any.K3";
  CHECK(check_measurement(m, "m", false, kNow).to_string() == "ok");
  m.config_key = "a b";
  CHECK_FALSE(check_measurement(m, "m", false, kNow).is_ok());
}

TEST_CASE("best entry and device checks", "[cache][checks]") {
  CHECK(check_best_entry(good_best(), "b", false, kNow).is_ok());
  BestEntry b = good_best();
  b.config_key = kIllegalFwdConfig;
  CHECK(check_best_entry(b, "best[0]", false, kNow).message().find("best[0].config_key") !=
        std::string::npos);
  b = testing::sample_best(sample_device().uuid, kBwdProblem, kIllegalBwdConfig, kNow);
  b.family = "bwd";
  CHECK(check_best_entry(b, "best[0]", false, kNow).message().find("best[0].config_key") !=
        std::string::npos);
  b.config_key = kLegalBwdConfig;
  CHECK(check_best_entry(b, "b", false, kNow).to_string() == "ok");
  b = good_best();
  b.median_ms = -0.1;
  CHECK_FALSE(check_best_entry(b, "b", false, kNow).is_ok());
  b = good_best();
  b.median_ms = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(check_best_entry(b, "b", false, kNow).is_ok());
  b = good_best();
  b.timestamp = INT64_MAX;
  CHECK_FALSE(check_best_entry(b, "b", false, kNow).is_ok());

  CHECK(check_device_record(sample_device(), "d").is_ok());
  DeviceRecord d = sample_device();
  d.name = "NVIDIA\x1b]0;owned\x07 H200";
  CHECK(check_device_record(d, "devices[0]").message().find("devices[0].name") !=
        std::string::npos);
  d = sample_device();
  d.name = "two\nlines";
  CHECK_FALSE(check_device_record(d, "d").is_ok());
  d = sample_device();
  d.uuid = "";
  CHECK_FALSE(check_device_record(d, "d").is_ok());
  d = sample_device();
  d.sm_count = -1;
  CHECK_FALSE(check_device_record(d, "d").is_ok());
}

TEST_CASE("check_text accepts UTF-8 and refuses control characters and bad sequences",
          "[cache][checks]") {
  CHECK(check_text("NVIDIA H200 \xe2\x9c\x93 \xf0\x9f\x9a\x80", "t").is_ok());
  for (const char* bad : {"\x1b[2J", "a\x7f", "\xc2\x85", "\xff", "\xc0\x80", "\xe0\x80\x80",
                          "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x9c", "tab\there"}) {
    INFO(std::string(bad).size());
    CHECK_FALSE(check_text(bad, "t").is_ok());
  }
  CHECK(check_text("tab\there\nnext", "t", true).is_ok());
  CHECK_FALSE(check_text(std::string(kMaxTextBytes + 1, 'a'), "t").is_ok());
}

TEST_CASE("printable_text makes any bytes text the checks accept", "[cache][checks]") {
  // What a tuning session records: a log excerpt cut mid-character, escapes.
  CHECK(printable_text("ok \xc3\xa9\nline\t2") == "ok \xc3\xa9\nline\t2");
  CHECK(printable_text("cut \xe2\x9c") == "cut ??");
  CHECK(printable_text("\x1b[31mred", false) == "?[31mred");
  CHECK(printable_text("a\nb", false) == "a?b");
  CHECK(printable_text(std::string(10, 'x') + "\xf0\x9f\x9a\x80", true, 12) ==
        std::string(10, 'x'));  // never half a character
  uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 256);
    const bool multiline = rng() % 2;
    const std::string t = printable_text(bytes, multiline);
    INFO(i);
    CHECK(check_text(t, "t", multiline).is_ok());
    CHECK(printable_text(t, multiline) == t);
  }
}

// An export with one device and the measurement `m` (json), for import.
json export_with(const json& m, const json& device_patch = json::object()) {
  const auto d = sample_device();
  json dev = {{"uuid", d.uuid},         {"name", d.name},  {"cc_major", 9},
              {"cc_minor", 0},          {"sm_count", 132}, {"driver_version", 13000},
              {"nvrtc_version", "13.0"}};
  dev.update(device_patch);
  return {{"application", "ssmtune"},
          {"format", 2},
          {"devices", json::array({dev})},
          {"measurements", m.is_null() ? json::array() : json::array({m})}};
}

json good_json() {
  return {{"device_uuid", sample_device().uuid},
          {"problem_key", problem_key()},
          {"config_key", config_key()},
          {"status", "ok"},
          {"median_ms", 0.5},
          {"template_hash", "h"},
          {"nvrtc_version", "13.0"},
          {"timestamp", kNow},
          {"errors", json::array({{{"output", "out"}, {"rel_l2", 1e-6}, {"budget", 2e-5}}})}};
}

TEST_CASE("import refuses hostile values, names the entry, and changes nothing",
          "[cache][checks]") {
  TempDir dir;
  auto db = TuningDb::open(dir.file("t.db"), OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  struct Case {
    const char* what;
    json file;
  };
  auto m = [](const char* k, json v) {
    json j = good_json();
    j[k] = std::move(v);
    return j;
  };
  const Case cases[] = {
      {"measurements[0].median_ms", export_with(m("median_ms", -1.0))},
      {"measurements[0].median_ms", export_with(m("median_ms", 1e308))},
      {"measurements[0].rel_l2", export_with(m("rel_l2", -0.5))},
      {"measurements[0].errors[0].rel_l2",
       export_with(m("errors", json::array({{{"output", "out"}, {"rel_l2", -0.5}}})))},
      {"measurements[0].errors[0].budget",
       export_with(m("errors", json::array({{{"output", "out"}, {"budget", -1}}})))},
      {"measurements[0].errors[0].unwritten",
       export_with(m("errors", json::array({{{"output", "out"}, {"unwritten", -1}}})))},
      {"measurements[0].repeats", export_with(m("repeats", -1))},
      {"measurements[0].timestamp", export_with(m("timestamp", INT64_MAX))},
      {"measurements[0].timestamp", export_with(m("timestamp", UINT64_MAX))},
      {"measurements[0].registers", export_with(m("registers", int64_t{1} << 32))},
      {"measurements[0].driver_version", export_with(m("driver_version", int64_t{13000} << 32))},
      {"measurements[0].config_key", export_with(m("config_key", kIllegalFwdConfig))},
      {"measurements[0].config_key", export_with([&] {
         json j = m("problem_key", kBwdProblem);
         j["config_key"] = kIllegalBwdConfig;
         return j;
       }())},
      {"devices[0].sm_count", export_with(nullptr, {{"sm_count", (int64_t{1} << 32) + 132}})},
      {"devices[0].driver_version", export_with(nullptr, {{"driver_version", int64_t{1} << 40}})},
      {"devices[0].cc_major", export_with(nullptr, {{"cc_major", UINT64_MAX}})},
      {"devices[0].name", export_with(nullptr, {{"name", "H200\u001b[31m\n"}})},
  };
  for (const auto& c : cases) {
    auto r = db->import_json(c.file, MergePolicy::kIncomingWins);
    INFO(c.what << ": " << r.status().to_string());
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find(c.what) != std::string::npos);
  }
  CHECK(db->devices()->empty());
  CHECK(db->measurements()->empty());
  // Found by the import fuzzer: "application" of another type threw.
  for (json app : {json(1700000500), json(nullptr), json::array({"ssmtune"})}) {
    auto r = db->import_json({{"application", app}, {"format", 1}}, MergePolicy::kNewerWins);
    CHECK(r.status().message().find("not an ssmtune export") != std::string::npos);
  }
  // A best entry with a time of 2^63-1 cannot win every later merge.
  json best = {{"device_uuid", sample_device().uuid},
               {"problem_key", problem_key()},
               {"config_key", config_key()},
               {"median_ms", 0.5},
               {"template_hash", "h"},
               {"nvrtc_version", "13.0"},
               {"timestamp", INT64_MAX}};
  json f = export_with(nullptr);
  f["best"] = json::array({best});
  auto r = db->import_json(f, MergePolicy::kNewerWins);
  CHECK(r.status().message().find("best[0].timestamp") != std::string::npos);
  // ... nor can a driver version cut to 32 bits match another.
  best["timestamp"] = kNow;
  best["driver_version"] = (int64_t{1} << 32) + 13000;
  f["best"] = json::array({best});
  r = db->import_json(f, MergePolicy::kNewerWins);
  CHECK(r.status().message().find("best[0].driver_version") != std::string::npos);
  CHECK(db->list_best(Versions{})->empty());
  // A format 1 file (the error of out as measurement fields) is checked as well.
  json legacy = export_with(m("max_abs_rel", -1.0));
  legacy["format"] = 1;
  legacy["measurements"][0].erase("errors");
  r = db->import_json(legacy, MergePolicy::kIncomingWins);
  CHECK(r.status().message().find("measurements[0].errors[0].max_abs_rel") != std::string::npos);
  CHECK(db->measurements()->empty());
}

TEST_CASE("the API write paths apply the same checks", "[cache][checks]") {
  TempDir dir;
  auto db = TuningDb::open(dir.file("t.db"), OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  DeviceRecord d = sample_device();
  d.name = "bad\x1b";
  CHECK_FALSE(db->upsert_device(d).is_ok());
  REQUIRE(db->upsert_device(sample_device()).is_ok());
  Measurement m = good();
  m.median_ms = -1;
  CHECK_FALSE(db->add_measurement(m).is_ok());
  CHECK_FALSE(db->add_measurements({good(), m}).is_ok());
  CHECK(db->measurements()->empty());
  BestEntry b = good_best();
  b.config_key = kIllegalFwdConfig;
  CHECK_FALSE(db->set_best(b).is_ok());
  m = good();
  m.errors[0].rel_l2 = -1;
  CHECK(db->add_measurement(m).message().find("errors[0].rel_l2") != std::string::npos);
  m = good();
  m.timestamp = 0;  // stamped now
  CHECK(db->add_measurement(m).is_ok());
}

}  // namespace
}  // namespace ssmtune::cache
