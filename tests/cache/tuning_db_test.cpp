#include "cache/tuning_db.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>

#include "cache/db_fixtures.h"
#include "cache/keys.h"

namespace ssmtune::cache {
namespace {

using testing::config_key;
using testing::problem_key;
using testing::sample_device;
using testing::sample_measurement;
using testing::TempDir;

TuningDb open_db(const std::string& path) {
  auto db = TuningDb::open(path, OpenMode::kReadWrite);
  INFO(db.status().to_string());
  REQUIRE(db.is_ok());
  return std::move(db).value();
}

Connection raw(const std::string& path) {
  auto c = Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE(c.is_ok());
  return std::move(c).value();
}

TEST_CASE("a new database gets the schema, WAL and its directory", "[cache]") {
  TempDir dir;
  const std::string path = dir.file("nested/deeper/tuning.db");
  {
    TuningDb db = open_db(path);
    CHECK(db.path() == path);
    CHECK(db.check_integrity().is_ok());
  }
  Connection c = raw(path);
  CHECK(*c.query_text("SELECT value FROM meta WHERE key = 'application'") == "ssmtune");
  CHECK(*c.query_text("SELECT value FROM meta WHERE key = 'schema_version'") ==
        std::to_string(kSchemaVersion));
  CHECK(*c.query_text("PRAGMA journal_mode") == "wal");
  for (const char* t :
       {"devices", "problems", "configs", "measurements", "measurement_errors", "best", "cubins"}) {
    INFO(t);
    CHECK(*c.query_int(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                   "name = '") +
                       t + "'") == 1);
  }
  CHECK(*TuningDb::schema_version_of(path) == kSchemaVersion);
  CHECK(*TuningDb::schema_version_of(dir.file("missing.db")) == 0);
  // Reopening is a no-op; read-only works and refuses writes.
  TuningDb again = open_db(path);
  auto ro = TuningDb::open(path, OpenMode::kReadOnly);
  REQUIRE(ro.is_ok());
  CHECK(ro->read_only());
  CHECK_FALSE(ro->upsert_device(sample_device()).is_ok());
}

TEST_CASE("read-only open of a missing file is not found and creates nothing", "[cache]") {
  TempDir dir;
  auto db = TuningDb::open(dir.file("none.db"), OpenMode::kReadOnly);
  REQUIRE_FALSE(db.is_ok());
  CHECK(db.status().code() == Code::kNotFound);
  CHECK(db.status().message().find("none.db") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("none.db")));
}

TEST_CASE("a version 1 database is migrated, keeping its rows", "[cache]") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  const auto dev = sample_device();
  const std::string pk = key_body(problem_key()), ck = config_key();
  {
    Connection c = raw(path);
    REQUIRE(c.exec(testing::kSchemaV1).is_ok());
    REQUIRE(c.exec("INSERT INTO devices VALUES ('" + dev.uuid +
                   "', 'NVIDIA H200', 9, 0, 132, "
                   "13000, '13.0');"
                   "INSERT INTO problems VALUES ('" +
                   pk + "', 'fp32.D.z', 2, 48, 17, 16, 1, 'fp32', 1, 1, 1, 1, 0, 0, 0, 0);" +
                   "INSERT INTO configs VALUES ('" + ck +
                   "', 'sequential', 32, 1, 'fp32', 128, 8, 1, 'fast', 0);"
                   "INSERT INTO measurements (device_uuid, problem_key, config_key, status, "
                   "median_ms, spread_ms, repeats, rel_l2, max_abs_rel, max_rel, nan_inf, "
                   "unwritten, verdict, error_budget, detail, template_hash, driver_version, "
                   "nvrtc_version, timestamp, registers, spill_bytes, shared_bytes) VALUES ('" +
                   dev.uuid + "', '" + pk + "', '" + ck +
                   "', 'ok', 0.5, 0.01, 20, 1e-6, 2e-6, 3e-6, 0, 0, 'inside', 2e-5, '', 'abc', "
                   "13000, '13.0', 1600000000, 40, 0, 0);")
                .is_ok());
  }
  CHECK(*TuningDb::schema_version_of(path) == 1);
  auto ro = TuningDb::open(path, OpenMode::kReadOnly);
  REQUIRE_FALSE(ro.is_ok());
  CHECK(ro.status().message().find("older") != std::string::npos);

  TuningDb db = open_db(path);
  CHECK(*TuningDb::schema_version_of(path) == kSchemaVersion);
  auto ms = db.measurements();
  REQUIRE(ms.is_ok());
  REQUIRE(ms->size() == 1);
  CHECK((*ms)[0].median_ms == 0.5);
  CHECK(std::isnan((*ms)[0].min_ms));  // not measured by version 1
  CHECK((*ms)[0].timestamp == 1600000000);
  CHECK((*ms)[0].problem_key == "fwd:" + pk);
  REQUIRE((*ms)[0].errors.size() == 1);
  CHECK((*ms)[0].errors[0].max_rel == 3e-6);
  // The new column and table work.
  auto m = sample_measurement(dev.uuid, pk, ck, 0.4);
  REQUIRE(db.add_measurement(m).is_ok());
  jit::CompiledProgram p;
  p.key = "k";
  p.cubin = "elf";
  REQUIRE(db.put_cubin(p).is_ok());
  CHECK(*db.cubin_count() == 1);
  CHECK(db.check_integrity().is_ok());
}

TEST_CASE("a database from a newer ssmtune is refused and left untouched", "[cache]") {
  TempDir dir;
  const std::string path = dir.file("newer.db");
  { TuningDb db = open_db(path); }
  {
    Connection c = raw(path);
    REQUIRE(c.exec("UPDATE meta SET value = '" + std::to_string(kSchemaVersion + 1) +
                   "' WHERE key = 'schema_version'")
                .is_ok());
    REQUIRE(c.exec("PRAGMA wal_checkpoint(TRUNCATE)").is_ok());
  }
  const std::string before = testing::read_file(path);
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto db = TuningDb::open(path, mode);
    REQUIRE_FALSE(db.is_ok());
    CHECK(db.status().code() == Code::kUnsupported);
    CHECK(db.status().message().find("written by a newer ssmtune") != std::string::npos);
  }
  CHECK(testing::read_file(path) == before);
}

TEST_CASE("a corrupt or foreign file is refused and left byte-identical", "[cache]") {
  TempDir dir;
  SECTION("random bytes") {
    const std::string path = dir.file("random.db");
    std::mt19937 rng(17);
    std::string bytes(4099, '\0');
    for (char& ch : bytes) ch = static_cast<char>(rng());
    testing::write_file(path, bytes);
    for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
      auto db = TuningDb::open(path, mode);
      REQUIRE_FALSE(db.is_ok());
      CHECK(db.status().code() == Code::kCorrupt);
      CHECK(db.status().message().find("not an sqlite database or is corrupt") !=
            std::string::npos);
    }
    CHECK(testing::read_file(path) == bytes);
    CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  }
  SECTION("another program's sqlite database") {
    const std::string path = dir.file("foreign.db");
    {
      Connection c = raw(path);
      REQUIRE(c.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);"
                     "INSERT INTO users (name) VALUES ('ada')")
                  .is_ok());
    }
    const std::string before = testing::read_file(path);
    auto db = TuningDb::open(path, OpenMode::kReadWrite);
    REQUIRE_FALSE(db.is_ok());
    CHECK(db.status().code() == Code::kCorrupt);
    CHECK(db.status().message().find("not an ssmtune tuning database") != std::string::npos);
    CHECK(db.status().message().find("users") != std::string::npos);
    CHECK(testing::read_file(path) == before);
    CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  }
  SECTION("a meta table of another application") {
    const std::string path = dir.file("other-meta.db");
    {
      Connection c = raw(path);
      REQUIRE(c.exec("CREATE TABLE meta (key TEXT, value TEXT);"
                     "INSERT INTO meta VALUES ('application', 'frobnicator')")
                  .is_ok());
    }
    const std::string before = testing::read_file(path);
    auto db = TuningDb::open(path, OpenMode::kReadWrite);
    REQUIRE_FALSE(db.is_ok());
    CHECK(db.status().message().find("frobnicator") != std::string::npos);
    CHECK(testing::read_file(path) == before);
  }
}

TEST_CASE("an empty file becomes a new database", "[cache]") {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  testing::write_file(path, "");
  auto ro = TuningDb::open(path, OpenMode::kReadOnly);
  CHECK(ro.status().code() == Code::kNotFound);
  TuningDb db = open_db(path);
  CHECK(*TuningDb::schema_version_of(path) == kSchemaVersion);
}

TEST_CASE("measurements are stored, filtered and checked", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  const auto dev = sample_device(), dev2 = sample_device(1);
  REQUIRE(db.upsert_device(dev).is_ok());
  REQUIRE(db.upsert_device(dev2).is_ok());

  auto m = sample_measurement(dev.uuid, problem_key(0), config_key(0), 0.5);
  SECTION("round trip of every field, with non-finite numbers") {
    m.status = MeasureStatus::kFaulted;
    m.median_ms = std::numeric_limits<double>::quiet_NaN();
    m.rel_l2 = std::numeric_limits<double>::infinity();
    m.nan_inf = 12;
    m.unwritten = 3;
    m.detail = "CUDA_ERROR_ILLEGAL_ADDRESS";
    m.verdict = "defect";
    m.errors[0].max_rel = std::numeric_limits<double>::quiet_NaN();
    m.errors[0].rel_l2 = std::numeric_limits<double>::infinity();  // (negative is refused)
    m.errors[0].unwritten = 5;
    REQUIRE(db.add_measurement(m).is_ok());
    auto got = db.measurements();
    REQUIRE(got->size() == 1);
    CHECK(testing::same((*got)[0], m));
  }
  SECTION("filters, limit and resume lookup") {
    std::vector<Measurement> batch;
    for (int i = 0; i < 7; ++i) {
      auto x = sample_measurement(i < 5 ? dev.uuid : dev2.uuid, problem_key(i % 2), config_key(i),
                                  0.1 * (i + 1), 1e-6, 1700000000 + i);
      if (i == 3) x.status = MeasureStatus::kPruned;
      batch.push_back(x);
    }
    REQUIRE(db.add_measurements(batch).is_ok());
    CHECK(db.measurements()->size() == 7);
    CHECK(db.measurements({.device_uuid = dev.uuid})->size() == 5);
    CHECK(db.measurements({.problem_key = problem_key(1)})->size() == 3);
    CHECK(db.measurements({.config_key = config_key(2)})->size() == 1);
    CHECK(db.measurements({.family = "fwd"})->size() == 7);
    CHECK(db.measurements({.family = "bwd"})->empty());
    // A key without its family prefix is a forward key.
    CHECK(db.measurements({.problem_key = key_body(problem_key(1))})->size() == 3);
    MeasurementFilter f;
    f.status = MeasureStatus::kPruned;
    CHECK(db.measurements(f)->size() == 1);
    MeasurementFilter last;
    last.limit = 2;
    auto newest = db.measurements(last);
    REQUIRE(newest->size() == 2);
    CHECK((*newest)[0].timestamp == 1700000005);
    CHECK((*newest)[1].timestamp == 1700000006);
    CHECK((*newest)[1].errors.size() == 2);  // out and out_z, in their order
    CHECK((*newest)[1].errors[1].output == "out_z");
  }
  SECTION("bad keys and unknown devices are refused; a batch is all or nothing") {
    auto bad_problem = m;
    bad_problem.problem_key = "b2.d48";
    Status s = db.add_measurement(bad_problem);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("bad problem key") != std::string::npos);
    auto bad_config = m;
    bad_config.config_key = "seq.K64";
    CHECK(db.add_measurement(bad_config).message().find("bad kernel config key") !=
          std::string::npos);
    auto no_device = m;
    no_device.device_uuid = "GPU-unknown";
    CHECK(db.add_measurement(no_device).message().find("GPU-unknown") != std::string::npos);
    Status batch = db.add_measurements({m, m, bad_problem});
    CHECK(batch.message().find("measurement 2") != std::string::npos);
    CHECK(db.measurements()->empty());
    CHECK(db.problems()->empty());
  }
}

TEST_CASE("problems and devices are listed with counts", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  const auto dev = sample_device(), dev2 = sample_device(1);
  REQUIRE(db.upsert_device(dev).is_ok());
  REQUIRE(db.upsert_device(dev2).is_ok());
  auto failed = sample_measurement(dev.uuid, problem_key(0), config_key(1), 0.2);
  failed.status = MeasureStatus::kCompileFailed;
  REQUIRE(
      db.add_measurements({sample_measurement(dev.uuid, problem_key(0), config_key(0), 0.1), failed,
                           sample_measurement(dev2.uuid, problem_key(0), config_key(0), 0.3),
                           sample_measurement(dev2.uuid, problem_key(1), config_key(0), 0.3)})
          .is_ok());
  BestEntry b = testing::sample_best(dev.uuid, problem_key(0), config_key(0), 5, "h");
  REQUIRE(db.set_best(b).is_ok());
  auto ps = db.problems();
  REQUIRE(ps->size() == 2);
  const auto& p0 = (*ps)[0].key == problem_key(0) ? (*ps)[0] : (*ps)[1];
  CHECK(p0.measurements == 3);
  CHECK(p0.ok == 2);
  CHECK(p0.devices == 2);
  CHECK(p0.best == 1);
  auto ds = db.devices();
  REQUIRE(ds->size() == 2);
  for (const auto& d : *ds) {
    CHECK(d.measurements == 2);
    CHECK(d.problems == (d.device.uuid == dev.uuid ? 1 : 2));
  }
  // A device update replaces its versions.
  auto newer = dev;
  newer.driver_version = 13010;
  REQUIRE(db.upsert_device(newer).is_ok());
  CHECK((*db.device(dev.uuid))->driver_version == 13010);
  CHECK_FALSE(db.device("GPU-none")->has_value());
  CHECK(*db.has_problem(problem_key(1)));
  CHECK_FALSE(*db.has_problem(problem_key(5)));
}

TEST_CASE("best entries are stale under another driver, NVRTC or template version", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  const auto dev = sample_device();
  REQUIRE(db.upsert_device(dev).is_ok());
  const Versions v = testing::sample_versions();
  BestEntry b = testing::sample_best(dev.uuid, problem_key(), config_key(), 1700000000,
                                     v.template_hash, "fastest inside budget");
  REQUIRE(db.set_best(b).is_ok());
  auto cur = db.best(dev.uuid, problem_key(), v);
  REQUIRE(cur->has_value());
  CHECK_FALSE((*cur)->stale);
  CHECK((*cur)->rule == "fastest inside budget");
  CHECK((*cur)->config_key == config_key());

  Versions driver = v, nvrtc = v, templates = v;
  driver.driver_version = 13010;
  nvrtc.nvrtc_version = "13.1";
  templates.template_hash = "ffffffffffffffffffffffffffffffff";
  for (const Versions& other : {driver, nvrtc, templates}) {
    auto s = db.best(dev.uuid, problem_key(), other);
    REQUIRE(s->has_value());
    CHECK((*s)->stale);
  }
  CHECK(stale_reason(b.driver_version, b.nvrtc_version, b.template_hash, driver) ==
        "driver 13000 != 13010");
  // Fields left empty are not compared (no driver on this machine).
  Versions no_driver = v;
  no_driver.driver_version = 0;
  CHECK_FALSE((*db.best(dev.uuid, problem_key(), no_driver))->stale);
  // Stale is not deleted; a re-tune replaces the entry.
  auto all = db.list_best(nvrtc);
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].stale);
  b.nvrtc_version = "13.1";
  b.config_key = config_key(3);
  REQUIRE(db.set_best(b).is_ok());
  auto retuned = db.best(dev.uuid, problem_key(), nvrtc);
  CHECK_FALSE((*retuned)->stale);
  CHECK((*retuned)->config_key == config_key(3));
  CHECK(db.list_best(v)->size() == 1);
  CHECK_FALSE(db.best(dev.uuid, problem_key(9), v)->has_value());

  // Measurements: the current filter leaves out stale ones.
  auto m_old = sample_measurement(dev.uuid, problem_key(), config_key(), 0.1);
  auto m_new = m_old;
  m_new.nvrtc_version = "13.1";
  REQUIRE(db.add_measurements({m_old, m_new}).is_ok());
  MeasurementFilter f;
  f.current = nvrtc;
  auto current = db.measurements(f);
  REQUIRE(current->size() == 1);
  CHECK((*current)[0].nvrtc_version == "13.1");
  CHECK(is_stale(m_old, nvrtc));
  CHECK_FALSE(is_stale(m_new, nvrtc));
}

TEST_CASE("prune removes what it is asked to and says how much", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  const auto dev = sample_device();
  REQUIRE(db.upsert_device(dev).is_ok());
  const int64_t now = 1700000000;
  std::vector<Measurement> ms;
  for (int i = 0; i < 6; ++i)
    ms.push_back(sample_measurement(dev.uuid, problem_key(), config_key(i), 0.1, 1e-6,
                                    now - i * 10 * 86400));
  ms[1].status = MeasureStatus::kCompileFailed;
  ms[2].status = MeasureStatus::kPruned;
  ms[3].template_hash = "old";
  REQUIRE(db.add_measurements(ms).is_ok());
  BestEntry stale_best = testing::sample_best(dev.uuid, problem_key(), config_key(), now, "old");
  REQUIRE(db.set_best(stale_best).is_ok());

  CHECK(db.prune({}).status().code() == Code::kInvalidArgument);
  PruneOptions dry;
  dry.failed = true;
  dry.dry_run = true;
  CHECK(db.prune(dry)->measurements == 1);
  CHECK(db.measurements()->size() == 6);

  PruneOptions failed;
  failed.failed = true;
  CHECK(db.prune(failed)->measurements == 1);  // pruned is not failed
  PruneOptions old;
  old.older_than_days = 35;
  old.now = now;
  CHECK(db.prune(old)->measurements == 2);  // 40 and 50 days old
  PruneOptions stale;
  stale.stale = true;
  CHECK(db.prune(stale).status().code() == Code::kInvalidArgument);  // needs versions
  stale.versions = testing::sample_versions();
  auto r = db.prune(stale);
  CHECK(r->measurements == 1);
  CHECK(r->best == 1);
  CHECK(db.measurements()->size() == 2);
  CHECK(db.list_best({})->empty());
}

TEST_CASE("export then import into a fresh database round-trips exactly", "[cache]") {
  TempDir dir;
  TuningDb a = open_db(dir.file("a.db"));
  const auto dev = sample_device(), dev2 = sample_device(1);
  REQUIRE(a.upsert_device(dev).is_ok());
  REQUIRE(a.upsert_device(dev2).is_ok());
  std::vector<Measurement> ms;
  for (int i = 0; i < 9; ++i)
    ms.push_back(sample_measurement(i % 2 ? dev.uuid : dev2.uuid, problem_key(i % 3), config_key(i),
                                    0.1 + i / 7.0, 1e-6 * (i + 1), 1700000000 + i));
  ms[4].status = MeasureStatus::kLaunchFailed;
  ms[4].median_ms = std::numeric_limits<double>::quiet_NaN();
  ms[4].rel_l2 = std::numeric_limits<double>::infinity();
  ms[4].detail = "too many resources requested, \"quoted\"\nsecond line";
  REQUIRE(a.add_measurements(ms).is_ok());
  REQUIRE(a.set_best(testing::sample_best(dev.uuid, problem_key(1), config_key(1), 1700000001, "h",
                                          "fastest inside budget (0.250 ms)"))
              .is_ok());
  auto exported = a.export_json();
  REQUIRE(exported.is_ok());
  const std::string text = exported->dump();  // through text, as between machines

  TuningDb b = open_db(dir.file("b.db"));
  auto report = b.import_json(nlohmann::json::parse(text), MergePolicy::kIncomingWins);
  INFO(report.status().to_string());
  REQUIRE(report.is_ok());
  CHECK(report->devices_added == 2);
  CHECK(report->measurements_added == 9);
  CHECK(report->best_added == 1);
  auto ma = a.measurements(), mb = b.measurements();
  REQUIRE(ma->size() == mb->size());
  for (size_t i = 0; i < ma->size(); ++i) CHECK(testing::same((*ma)[i], (*mb)[i]));
  auto again = b.export_json();
  (*exported).erase("exported_at");
  (*again).erase("exported_at");
  CHECK(*exported == *again);

  // Importing the same file twice adds nothing.
  auto twice = b.import_json(nlohmann::json::parse(text), MergePolicy::kIncomingWins);
  CHECK(twice->measurements_added == 0);
  CHECK(twice->measurements_skipped == 9);
  CHECK(b.measurements()->size() == 9);
}

TEST_CASE("merge keeps the newer best entry; import takes the file's", "[cache]") {
  TempDir dir;
  TuningDb ours = open_db(dir.file("ours.db"));
  TuningDb theirs = open_db(dir.file("theirs.db"));
  const auto dev = sample_device();
  for (TuningDb* db : {&ours, &theirs}) REQUIRE(db->upsert_device(dev).is_ok());
  auto entry = [&](int problem, int config, int64_t t) {
    return testing::sample_best(dev.uuid, problem_key(problem), config_key(config), t, "h");
  };
  REQUIRE(ours.set_best(entry(0, 0, 200)).is_ok());  // ours newer
  REQUIRE(ours.set_best(entry(1, 0, 100)).is_ok());  // theirs newer
  REQUIRE(theirs.set_best(entry(0, 1, 150)).is_ok());
  REQUIRE(theirs.set_best(entry(1, 1, 300)).is_ok());
  REQUIRE(theirs.set_best(entry(2, 1, 300)).is_ok());  // only theirs
  auto file = theirs.export_json();
  REQUIRE(file.is_ok());

  SECTION("merge") {
    auto r = ours.import_json(*file, MergePolicy::kNewerWins);
    REQUIRE(r.is_ok());
    CHECK(r->best_kept == 1);
    CHECK(r->best_replaced == 1);
    CHECK(r->best_added == 1);
    CHECK((*ours.best(dev.uuid, problem_key(0), {}))->config_key == config_key(0));
    CHECK((*ours.best(dev.uuid, problem_key(1), {}))->config_key == config_key(1));
    CHECK((*ours.best(dev.uuid, problem_key(2), {}))->config_key == config_key(1));
  }
  SECTION("import") {
    auto r = ours.import_json(*file, MergePolicy::kIncomingWins);
    REQUIRE(r.is_ok());
    CHECK(r->best_replaced == 2);
    CHECK((*ours.best(dev.uuid, problem_key(0), {}))->config_key == config_key(1));
  }
}

TEST_CASE("bad import files are refused with the entry named and change nothing", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  using nlohmann::json;
  CHECK(db.import_json(json::array(), MergePolicy::kNewerWins)
            .status()
            .message()
            .find("not an ssmtune export") != std::string::npos);
  CHECK(db.import_json({{"application", "ssmtune"}, {"format", 99}}, MergePolicy::kNewerWins)
            .status()
            .code() == Code::kUnsupported);
  const auto dev = sample_device();
  json good_m = {{"device_uuid", dev.uuid},    {"problem_key", problem_key()},
                 {"config_key", config_key()}, {"status", "ok"},
                 {"template_hash", "h"},       {"nvrtc_version", "13.0"},
                 {"timestamp", 1700000000}};
  json devices = json::array({{{"uuid", dev.uuid},
                               {"name", dev.name},
                               {"cc_major", 9},
                               {"cc_minor", 0},
                               {"sm_count", 132},
                               {"driver_version", 13000},
                               {"nvrtc_version", "13.0"}}});
  auto with = [&](const json& m) {
    return json{{"application", "ssmtune"},
                {"format", 1},
                {"devices", devices},
                {"measurements", json::array({good_m, m})}};
  };
  json bad_status = good_m;
  bad_status["status"] = "exploded";
  auto r1 = db.import_json(with(bad_status), MergePolicy::kNewerWins);
  CHECK(r1.status().message().find("measurements[1].status") != std::string::npos);
  json bad_type = good_m;
  bad_type["median_ms"] = "fast";
  auto r2 = db.import_json(with(bad_type), MergePolicy::kNewerWins);
  CHECK(r2.status().message().find("measurements[1].median_ms") != std::string::npos);
  json bad_key = good_m;
  bad_key["problem_key"] = "nonsense";
  bad_key["timestamp"] = 1700000001;
  auto r3 = db.import_json(with(bad_key), MergePolicy::kNewerWins);
  CHECK(r3.status().message().find("measurements[1]") != std::string::npos);
  CHECK(r3.status().message().find("bad problem key") != std::string::npos);
  CHECK(db.measurements()->empty());
  CHECK(db.devices()->empty());
  auto ok = db.import_json(with(good_m), MergePolicy::kNewerWins);
  REQUIRE(ok.is_ok());
  CHECK(ok->measurements_added == 1);
  CHECK(ok->measurements_skipped == 1);
}

TEST_CASE("families share the database: keys, filters and checks", "[cache]") {
  TempDir dir;
  TuningDb db = open_db(dir.file("t.db"));
  TuningStore& store = db;  // what a tuning session sees
  const auto dev = sample_device();
  REQUIRE(store.upsert_device(dev).is_ok());
  const std::string bwd = "bwd:b2.d48.l17.n16.g1.fp32", bwd_config = "seq.K64.D8.fp32.t32.s4.fast";
  auto fwd = sample_measurement(dev.uuid, problem_key(0), config_key(0), 0.5);
  Measurement back;
  back.device_uuid = dev.uuid;
  back.problem_key = bwd;  // family left empty: taken from the key
  back.config_key = bwd_config;
  back.median_ms = 0.7;
  back.timestamp = 1700000001;
  for (const char* o : {"du", "ddelta", "dA"}) {
    OutputError e;
    e.output = o;
    e.rel_l2 = 1e-6;
    e.budget = 1e-4;
    e.verdict = "inside";
    back.errors.push_back(e);
  }
  summarize_errors(back);
  REQUIRE(store.add_measurements({fwd, back}).is_ok());
  // The same config key in two families is two configs.
  auto fwd_same_key = sample_measurement(dev.uuid, problem_key(1), config_key(0), 0.6);
  REQUIRE(store.add_measurement(fwd_same_key).is_ok());
  auto b = store.measurements({.family = "bwd"});
  REQUIRE(b->size() == 1);
  CHECK((*b)[0].family == "bwd");
  CHECK((*b)[0].errors.size() == 3);
  CHECK((*b)[0].errors[2].output == "dA");
  auto ps = db.problems("bwd");
  REQUIRE(ps->size() == 1);
  CHECK((*ps)[0].key == bwd);
  CHECK((*ps)[0].family == "bwd");
  CHECK(db.problems()->size() == 3);
  BestEntry best = testing::sample_best(dev.uuid, bwd, bwd_config);
  best.family = "";
  REQUIRE(store.set_best(best).is_ok());
  CHECK((*store.best(dev.uuid, bwd, {}))->family == "bwd");
  CHECK(db.list_best({}, "", "bwd")->size() == 1);
  CHECK(db.list_best({}, "", "fwd")->empty());
  {
    Connection c = raw(dir.file("t.db"));
    CHECK(*c.query_text("SELECT params FROM problems WHERE key = '" + bwd + "'") ==
          R"(["b2","d48","l17","n16","g1","fp32"])");
    CHECK(*c.query_int("SELECT count(*) FROM configs WHERE key = '" + config_key(0) + "'") == 1);
  }

  auto mismatch = back;
  mismatch.family = "fwd";
  CHECK(store.add_measurement(mismatch).message().find("does not match") != std::string::npos);
  auto repeated = back;
  repeated.errors.push_back(repeated.errors[0]);
  CHECK(store.add_measurement(repeated).message().find("output 'du' repeated") !=
        std::string::npos);
  auto bad_family = back;
  bad_family.family.clear();
  bad_family.problem_key = "Bad Family:b1";
  CHECK(store.add_measurement(bad_family).code() == Code::kInvalidArgument);
  CHECK(store.measurements({})->size() == 3);

  // Deleting measurements deletes their errors.
  PruneOptions old;
  old.older_than_days = 0;
  old.now = 1800000000;
  CHECK(db.prune(old)->measurements == 3);
  Connection c = raw(dir.file("t.db"));
  CHECK(*c.query_int("SELECT count(*) FROM measurement_errors") == 0);
}

TEST_CASE("export format 2 carries families and per-output errors; format 1 still imports",
          "[cache]") {
  TempDir dir;
  TuningDb a = open_db(dir.file("a.db"));
  const auto dev = sample_device();
  REQUIRE(a.upsert_device(dev).is_ok());
  REQUIRE(
      a.add_measurement(sample_measurement(dev.uuid, problem_key(0), config_key(0), 0.5)).is_ok());
  auto j = a.export_json();
  REQUIRE(j.is_ok());
  CHECK((*j)["format"] == 2);
  const auto& m = (*j)["measurements"][0];
  CHECK(m["family"] == "fwd");
  CHECK(m["problem_key"] == problem_key(0));
  REQUIRE(m["errors"].size() == 2);
  CHECK(m["errors"][0]["output"] == "out");
  CHECK(m["errors"][0]["max_rel"] == 1e-6 * 10);
  CHECK(m["errors"][1]["output"] == "out_z");

  // A format 1 file as the version 2 code wrote it: unprefixed keys, the
  // error of out as measurement fields.
  using nlohmann::json;
  const std::string legacy = key_body(problem_key(0));
  json ran = {{"device_uuid", dev.uuid}, {"problem_key", legacy},   {"config_key", config_key(1)},
              {"status", "ok"},          {"median_ms", 0.4},        {"rel_l2", 2e-6},
              {"max_abs_rel", 5e-6},     {"max_rel", nullptr},      {"nan_inf", 0},
              {"unwritten", 0},          {"verdict", "inside"},     {"error_budget", 2e-5},
              {"template_hash", "h"},    {"nvrtc_version", "13.0"}, {"timestamp", 1700000000}};
  json pruned = {{"device_uuid", dev.uuid},     {"problem_key", legacy},
                 {"config_key", config_key(2)}, {"status", "pruned"},
                 {"detail", "too much smem"},   {"template_hash", "h"},
                 {"nvrtc_version", "13.0"},     {"timestamp", 1700000000}};
  json file = {{"application", "ssmtune"},
               {"format", 1},
               {"devices", (*j)["devices"]},
               {"measurements", json::array({ran, pruned})},
               {"best", json::array({{{"device_uuid", dev.uuid},
                                      {"problem_key", legacy},
                                      {"config_key", config_key(1)},
                                      {"median_ms", 0.4},
                                      {"template_hash", "h"},
                                      {"nvrtc_version", "13.0"},
                                      {"timestamp", 1700000000},
                                      {"rule", "fastest"}}})}};
  TuningDb b = open_db(dir.file("b.db"));
  auto r = b.import_json(file, MergePolicy::kIncomingWins);
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  auto ms = b.measurements();
  REQUIRE(ms->size() == 2);
  CHECK((*ms)[0].problem_key == problem_key(0));
  CHECK((*ms)[0].family == "fwd");
  REQUIRE((*ms)[0].errors.size() == 1);
  CHECK((*ms)[0].errors[0].output == "out");
  CHECK((*ms)[0].errors[0].max_abs_rel == 5e-6);
  CHECK(std::isnan((*ms)[0].errors[0].max_rel));
  CHECK((*ms)[0].errors[0].budget == 2e-5);
  CHECK((*ms)[0].rel_l2 == 2e-6);
  CHECK((*ms)[1].errors.empty());  // never ran: no error to keep
  auto best = b.best(dev.uuid, problem_key(0), {});
  REQUIRE(best->has_value());
  CHECK((*best)->family == "fwd");

  json bad = file;
  bad["format"] = 2;
  bad["measurements"][0]["errors"] = json::array({{{"rel_l2", 1}}});
  auto refused = b.import_json(bad, MergePolicy::kIncomingWins);
  CHECK(refused.status().message().find("measurements[0].errors[0].output: missing") !=
        std::string::npos);
}

}  // namespace
}  // namespace ssmtune::cache
