// The selector's rules on a seeded database: exact, nearest, default, and
// stale entries skipped; backward problems among backward entries.
#include "runtime/selector.h"

#include <catch2/catch.hpp>

#include "cache/db_fixtures.h"
#include "support/problems.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"

namespace ssmtune {
namespace {

jit::DeviceInfo device() {
  jit::DeviceInfo d;
  d.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  d.name = "test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_shared_per_block = 227 * 1024;
  d.registers_per_sm = 65536;
  d.driver_version = 13000;
  d.nvrtc_version = "13.0";
  return d;
}

using testing::shape;

const Versions kNow{13000, "13.0", "templates-now"};

bwd::BwdConfig require_config(const std::string& key) {
  auto c = bwd::BwdConfig::from_key(key);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  return *c;
}

void seed_best_keys(cache::TuningDb& db, const std::string& problem, const std::string& config,
                    double ms, const std::string& template_hash = "templates-now",
                    const std::string& uuid = device().uuid) {
  Measurement m;
  m.device_uuid = uuid;
  m.problem_key = problem;
  m.config_key = config;
  m.median_ms = ms;
  m.verdict = "inside";
  m.error_budget = 1e-4;
  m.template_hash = template_hash;
  m.driver_version = 13000;
  m.nvrtc_version = "13.0";
  m.timestamp = 1700000000;
  REQUIRE(db.add_measurement(m).is_ok());
  BestEntry b;
  b.device_uuid = m.device_uuid;
  b.problem_key = m.problem_key;
  b.config_key = m.config_key;
  b.median_ms = ms;
  b.template_hash = template_hash;
  b.driver_version = 13000;
  b.nvrtc_version = "13.0";
  b.timestamp = m.timestamp;
  b.rule = "fastest inside budget";
  REQUIRE(db.set_best(b).is_ok());
}

void seed_best(cache::TuningDb& db, const FwdProblem& p, const FwdConfig& c, double ms,
               const std::string& template_hash = "templates-now") {
  seed_best_keys(db, p.key(), c.key(), ms, template_hash);
}

TEST_CASE("the selector picks exact, then nearest, then the default", "[runtime]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(device_record(device())).is_ok());
  const FwdProblem mid = shape(8, 1536, 2048, 16), small = shape(8, 256, 1024, 4);
  FwdConfig warp = default_config(mid, ScanAlgo::kWarpScan);
  warp.d_step = 8;
  warp.threads = 256;
  const FwdConfig seq = default_config(small, ScanAlgo::kSequential);
  seed_best(*db, mid, warp, 0.73);
  seed_best(*db, small, seq, 0.05);

  auto exact = choose_config(&*db, device(), kNow, mid);
  REQUIRE(exact.is_ok());
  CHECK(exact->rule == SelectRule::kExact);
  CHECK(exact->config == warp);
  CHECK(exact->source_problem == mid.key());
  CHECK(exact->reason.rfind("exact:", 0) == 0);

  // (8, 1536, 4096, 16) is one doubling of seqlen from mid: nearest is mid.
  auto near = choose_config(&*db, device(), kNow, shape(8, 1536, 4096, 16));
  REQUIRE(near.is_ok());
  CHECK(near->rule == SelectRule::kNearest);
  CHECK(near->source_problem == mid.key());
  CHECK(near->config == warp);
  CHECK(near->distance == Approx(1.0));
  CHECK(near->reason.find(mid.key()) != std::string::npos);

  // Another dtype is another family: nothing tuned, the default.
  auto other = choose_config(&*db, device(), kNow, shape(8, 1536, 2048, 16, DType::kBF16));
  REQUIRE(other.is_ok());
  CHECK(other->rule == SelectRule::kDefault);
  CHECK(other->reason.rfind("default:", 0) == 0);
  CHECK(check_config(shape(8, 1536, 2048, 16, DType::kBF16), other->config).is_ok());

  // No database at all: the default.
  auto none = choose_config(nullptr, device(), kNow, mid);
  REQUIRE(none.is_ok());
  CHECK(none->rule == SelectRule::kDefault);
}

TEST_CASE("stale entries are not used, and a config illegal for the shape is skipped",
          "[runtime]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(device_record(device())).is_ok());
  const FwdProblem mid = shape(8, 1536, 2048, 16);
  seed_best(*db, mid, default_config(mid, ScanAlgo::kLookback), 1.0, "templates-old");
  auto r = choose_config(&*db, device(), kNow, mid);
  REQUIRE(r.is_ok());
  CHECK(r->rule == SelectRule::kDefault);
  CHECK(r->reason.find("1 stale") != std::string::npos);

  // A tuned n_split > 1 config cannot serve dstate 1 (n_split > dstate).
  testing::TempDir dir2;
  auto db2 = cache::TuningDb::open(dir2.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db2.is_ok());
  REQUIRE(db2->upsert_device(device_record(device())).is_ok());
  const FwdConfig split = default_config(mid, ScanAlgo::kSequential);
  REQUIRE(split.n_split > 1);
  seed_best(*db2, mid, split, 0.9);
  auto tiny = choose_config(&*db2, device(), kNow, shape(8, 1536, 2048, 1));
  REQUIRE(tiny.is_ok());
  CHECK(tiny->rule == SelectRule::kDefault);
  CHECK(tiny->reason.find("1 configs not legal") != std::string::npos);
}

TEST_CASE("problem distance is log2 over the four sizes", "[runtime]") {
  CHECK(problem_distance(shape(8, 256, 1024, 4), shape(8, 256, 1024, 4)) == 0);
  CHECK(problem_distance(shape(8, 256, 1024, 4), shape(16, 256, 1024, 4)) == Approx(1));
  CHECK(problem_distance(shape(1, 1, 1, 1), shape(2, 2, 2, 2)) == Approx(2));
}

TEST_CASE("backward problems select among bwd entries only: exact, nearest, default", "[runtime]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(device_record(device())).is_ok());
  bwd::BwdProblem mid;
  mid.fwd = shape(8, 1536, 2048, 16, DType::kBF16);
  mid.fwd.has_d = mid.fwd.has_z = true;
  const bwd::BwdConfig tuned = require_config("seq.K64.D16.fp32.t64.s4.fast");
  REQUIRE(bwd::check_config(mid, tuned, device().max_shared_per_block).is_ok());
  seed_best_keys(*db, mid.key(), tuned.key(), 1.2);
  // The forward entry of the same shape must not serve the backward.
  seed_best(*db, mid.fwd, default_config(mid.fwd, ScanAlgo::kSequential), 0.5);

  auto exact = choose_bwd_config(&*db, device(), kNow, mid);
  INFO(exact.status().to_string());
  REQUIRE(exact.is_ok());
  CHECK(exact->rule == SelectRule::kExact);
  CHECK(exact->config == tuned);
  CHECK(exact->source_problem == mid.key());

  bwd::BwdProblem longer = mid;
  longer.fwd.seqlen = 4096;
  auto near = choose_bwd_config(&*db, device(), kNow, longer);
  REQUIRE(near.is_ok());
  CHECK(near->rule == SelectRule::kNearest);
  CHECK(near->config == tuned);
  CHECK(near->source_problem == mid.key());
  CHECK(near->distance == Approx(1.0));

  // dlast is another class: the family's default, legal for the problem.
  bwd::BwdProblem with_dlast = mid;
  with_dlast.fwd.return_last_state = with_dlast.has_dlast = true;
  auto other = choose_bwd_config(&*db, device(), kNow, with_dlast);
  REQUIRE(other.is_ok());
  CHECK(other->rule == SelectRule::kDefault);
  CHECK(other->reason.rfind("default:", 0) == 0);
  CHECK(bwd::check_config(with_dlast, other->config, device().max_shared_per_block).is_ok());

  bwd::BwdProblem bad = mid;
  bad.has_dlast = true;  // without return_last_state
  CHECK(choose_bwd_config(&*db, device(), kNow, bad).status().code() == Code::kInvalidArgument);
}

TEST_CASE("forced configs: one key per family, comma-separated", "[runtime]") {
  const std::string fwd_key = "sequential.K128.D32.fp32.t64.i1.s2.fast";
  const std::string bwd_key = "mp.K16.D32.fp32.t128.s4.fast.S3";
  auto both = parse_forced_configs(fwd_key + "," + bwd_key);
  INFO(both.status().to_string());
  REQUIRE(both.is_ok());
  REQUIRE(both->fwd);
  REQUIRE(both->bwd);
  CHECK(both->fwd->key() == fwd_key);
  CHECK(both->bwd->key() == bwd_key);
  auto one = parse_forced_configs(fwd_key);
  REQUIRE(one.is_ok());
  CHECK(one->fwd);
  CHECK_FALSE(one->bwd);
  auto bad = parse_forced_configs(fwd_key + ",nonsense");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("'nonsense' is neither a forward config") != std::string::npos);
  auto twice = parse_forced_configs(bwd_key + "," + bwd_key);
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.status().message().find("a second config for the backward") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune

namespace ssmtune {
namespace {

// Another GPU of this test GPU's class (same name, compute capability, SM
// count; another UUID and driver), and one of another class.
jit::DeviceInfo twin() {
  jit::DeviceInfo d = device();
  d.uuid = "GPU-99999999-1111-2222-3333-444444444444";
  d.driver_version = 12080;
  return d;
}
jit::DeviceInfo other_class() {
  jit::DeviceInfo d = device();
  d.uuid = "GPU-77777777-1111-2222-3333-444444444444";
  d.name = "other GPU";
  d.sm_count = 114;
  return d;
}

TEST_CASE("device classes: name, compute capability and SM count", "[runtime]") {
  CHECK(device_class(device_record(device())) == "test GPU sm_90 132 SMs");
  CHECK(device_class(device_record(twin())) == device_class(device_record(device())));
  CHECK(device_class(device_record(other_class())) != device_class(device_record(device())));
}

TEST_CASE("device classes: memory in whole GiB when both know it", "[runtime]") {
  jit::DeviceInfo h200 = device(), h200_twin = twin(), smaller = twin();
  h200.total_memory = size_t{150754820096};                             // 140.4 GiB
  h200_twin.total_memory = size_t{150754820096} - (size_t{200} << 20);  // ECC reserve: still 140
  smaller.total_memory = size_t{85899345920};                           // 80 GiB
  CHECK(device_class(device_record(h200)) == "test GPU sm_90 132 SMs 140 GiB");
  CHECK(memory_gib(device_record(h200_twin)) == 140);
  CHECK(same_class(device_record(h200), device_record(h200_twin)));
  CHECK_FALSE(same_class(device_record(h200), device_record(smaller)));
  // A row migrated from schema 3 (memory unknown) keeps serving its class.
  CHECK(same_class(device_record(h200), device_record(twin())));
  CHECK(same_class(device_record(twin()), device_record(smaller)));
  CHECK_FALSE(same_class(device_record(h200), device_record(other_class())));

  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(device_record(smaller)).is_ok());
  const FwdProblem mid = shape(8, 1536, 2048, 16);
  seed_best_keys(*db, mid.key(), default_config(mid, ScanAlgo::kSequential).key(), 0.7,
                 "templates-now", smaller.uuid);
  // The 80 GiB GPU's entry does not serve the 141 GB one...
  auto c = choose_config(&*db, h200, kNow, mid);
  REQUIRE(c.is_ok());
  CHECK(c->rule == SelectRule::kDefault);
  // ... but does serve a GPU whose memory is not known.
  auto unknown = choose_config(&*db, device(), kNow, mid);
  REQUIRE(unknown.is_ok());
  CHECK(unknown->rule == SelectRule::kExactClass);
}

TEST_CASE("an identical GPU's entries serve this one; another class's never", "[runtime]") {
  testing::TempDir dir;
  auto db = cache::TuningDb::open(dir.file("t.db"), cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  for (const auto& d : {device(), twin(), other_class()})
    REQUIRE(db->upsert_device(device_record(d)).is_ok());
  const FwdProblem mid = shape(8, 1536, 2048, 16);
  const FwdProblem bf16 = shape(8, 256, 1024, 4, DType::kBF16);  // a class nobody here tuned
  FwdConfig warp = default_config(mid, ScanAlgo::kWarpScan);
  warp.d_step = 8;
  warp.threads = 256;
  const FwdConfig seq = default_config(mid, ScanAlgo::kSequential);
  // Tuned on the twin only (the database came from another machine).
  seed_best_keys(*db, mid.key(), warp.key(), 0.73, "templates-now", twin().uuid);

  auto exact = choose_config(&*db, device(), kNow, mid);
  REQUIRE(exact.is_ok());
  CHECK(exact->rule == SelectRule::kExactClass);
  CHECK(is_exact(exact->rule));
  CHECK(exact->config == warp);
  CHECK(exact->source_device == twin().uuid);
  CHECK(exact->reason.find(twin().uuid) != std::string::npos);
  CHECK(exact->reason.find("test GPU sm_90 132 SMs") != std::string::npos);

  // Nearest from the twin's entry, saying so.
  auto near = choose_config(&*db, device(), kNow, shape(8, 1536, 4096, 16));
  REQUIRE(near.is_ok());
  CHECK(near->rule == SelectRule::kNearest);
  CHECK(near->source_device == twin().uuid);
  CHECK(near->reason.find(twin().uuid) != std::string::npos);

  // This GPU's own entry wins over the twin's.
  seed_best(*db, mid, seq, 0.80);
  auto own = choose_config(&*db, device(), kNow, mid);
  REQUIRE(own.is_ok());
  CHECK(own->rule == SelectRule::kExact);
  CHECK(own->config == seq);
  CHECK(own->source_device.empty());

  // Another class's entry is never used: the default.
  seed_best_keys(*db, bf16.key(), default_config(bf16, ScanAlgo::kSequential).key(), 0.05,
                 "templates-now", other_class().uuid);
  auto other = choose_config(&*db, device(), kNow, bf16);
  REQUIRE(other.is_ok());
  CHECK(other->rule == SelectRule::kDefault);
  // ... and the other class sees neither this GPU's nor the twin's entries.
  auto theirs = choose_config(&*db, other_class(), kNow, mid);
  REQUIRE(theirs.is_ok());
  CHECK(theirs->rule != SelectRule::kExact);
  CHECK(theirs->rule != SelectRule::kExactClass);
}

// A database at `path` holding this GPU, its twin and the other class.
cache::TuningDb open_seeded(const std::string& path) {
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  for (const auto& d : {device(), twin(), other_class()})
    REQUIRE(db->upsert_device(device_record(d)).is_ok());
  return std::move(*db);
}

TEST_CASE("over layered databases each rule looks in every layer, local first",
          "[runtime][layers]") {
  testing::TempDir dir;
  const std::string local_path = dir.file("local.db"), shared_path = dir.file("shared.db");
  const FwdProblem mid = shape(8, 1536, 2048, 16), longer = shape(8, 1536, 4096, 16);
  FwdConfig warp = default_config(mid, ScanAlgo::kWarpScan);
  warp.d_step = 8;
  warp.threads = 256;
  const FwdConfig seq = default_config(mid, ScanAlgo::kSequential);
  {
    cache::TuningDb local = open_seeded(local_path);
    cache::TuningDb shared = open_seeded(shared_path);
    // Local: this GPU tuned `mid` (seq). Shared: this GPU tuned `mid` (warp)
    // and `longer` (warp); the twin tuned a bf16 problem.
    seed_best(local, mid, seq, 0.80);
    seed_best(shared, mid, warp, 0.73);
    seed_best(shared, longer, warp, 1.40);
  }
  auto paths = cache::split_db_paths(local_path + ":" + shared_path);
  REQUIRE(paths.is_ok());
  auto stack = cache::DbStack::open(*paths, cache::OpenMode::kReadWrite);
  REQUIRE(stack.is_ok());
  const auto layers = stack->layers();

  // A local exact entry beats the shared one.
  auto exact = choose_config(layers, device(), kNow, mid);
  REQUIRE(exact.is_ok());
  CHECK(exact->rule == SelectRule::kExact);
  CHECK(exact->config == seq);
  CHECK(exact->source_db == local_path);
  CHECK_FALSE(exact->source_shared);
  CHECK(exact->reason.find("[from the local database " + local_path + "]") != std::string::npos);

  // A shared exact entry beats a local nearest one (mid is one doubling away).
  auto shared_exact = choose_config(layers, device(), kNow, longer);
  REQUIRE(shared_exact.is_ok());
  CHECK(shared_exact->rule == SelectRule::kExact);
  CHECK(shared_exact->config == warp);
  CHECK(shared_exact->source_db == shared_path);
  CHECK(shared_exact->source_shared);
  CHECK(shared_exact->reason.find("[from the shared database " + shared_path + "]") !=
        std::string::npos);

  // Nearest across layers: the closest entry of any layer (here the
  // shared `longer` for 8192, one doubling from it, two from mid).
  auto nearest = choose_config(layers, device(), kNow, shape(8, 1536, 8192, 16));
  REQUIRE(nearest.is_ok());
  CHECK(nearest->rule == SelectRule::kNearest);
  CHECK(nearest->source_problem == longer.key());
  CHECK(nearest->source_db == shared_path);
  // A tie goes to the local layer: 1024 is one doubling from mid (local)
  // and nothing else is closer.
  auto tie = choose_config(layers, device(), kNow, shape(8, 1536, 1024, 16));
  REQUIRE(tie.is_ok());
  CHECK(tie->rule == SelectRule::kNearest);
  CHECK(tie->source_db == local_path);

  // A shared exact-class entry (the twin's) beats a local nearest one.
  const FwdProblem wide = shape(8, 3072, 2048, 16);
  {
    auto shared = cache::TuningDb::open(shared_path, cache::OpenMode::kReadWrite);
    REQUIRE(shared.is_ok());
    seed_best_keys(*shared, wide.key(), warp.key(), 1.2, "templates-now", twin().uuid);
  }
  auto cls = choose_config(layers, device(), kNow, wide);
  REQUIRE(cls.is_ok());
  CHECK(cls->rule == SelectRule::kExactClass);
  CHECK(cls->source_device == twin().uuid);
  CHECK(cls->source_db == shared_path);

  // Nothing anywhere: the default, from no database.
  auto none = choose_config(layers, device(), kNow, shape(8, 256, 1024, 4, DType::kBF16));
  REQUIRE(none.is_ok());
  CHECK(none->rule == SelectRule::kDefault);
  CHECK(none->source_db.empty());
}

TEST_CASE("one database names no layer: reasons read as before", "[runtime][layers]") {
  testing::TempDir dir;
  cache::TuningDb db = open_seeded(dir.file("t.db"));
  const FwdProblem mid = shape(8, 1536, 2048, 16);
  seed_best(db, mid, default_config(mid, ScanAlgo::kSequential), 0.5);
  auto one = choose_config(&db, device(), kNow, mid);
  REQUIRE(one.is_ok());
  CHECK(one->rule == SelectRule::kExact);
  CHECK(one->source_db == dir.file("t.db"));
  CHECK(one->reason.find("[from") == std::string::npos);
  auto stack_of_one = choose_config(std::vector<cache::DbLayer>{{&db, false}}, device(), kNow, mid);
  REQUIRE(stack_of_one.is_ok());
  CHECK(stack_of_one->reason == one->reason);
}

}  // namespace
}  // namespace ssmtune
