// `ssmtune db` as a user runs it, against databases seeded through the C++
// API: help, outputs in each format, explain, export/import, and errors.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cache/db_fixtures.h"
#include "cache/sqlite.h"
#include "cache/tuning_db.h"
#include "support/run_command.h"

namespace ssmtune {
namespace {

using nlohmann::json;
using testing::run_command;
const std::string kBin = SSMTUNE_BINARY;
const std::string kVersions =
    " --driver 13.0 --nvrtc 13.0 --template-hash 0123456789abcdef0123456789abcdef";

// Two devices; on device 0, problem 0 has a fast config (a), a tie within
// the spread that is more accurate (b), a slower one (c), one over budget
// and one that faulted; problem 1 has one config. Device 1 measured
// problem 0 once, under an older driver.
void seed(const std::string& path) {
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  const auto d0 = testing::sample_device(0), d1 = testing::sample_device(1);
  REQUIRE(db->upsert_device(d0).is_ok());
  REQUIRE(db->upsert_device(d1).is_ok());
  using testing::config_key;
  using testing::problem_key;
  using testing::sample_measurement;
  auto a = sample_measurement(d0.uuid, problem_key(0), config_key(0), 0.112, 3.1e-6);
  a.spread_ms = 0.001;
  auto b = sample_measurement(d0.uuid, problem_key(0), config_key(1), 0.115, 1e-7);
  b.spread_ms = 0.004;
  auto c = sample_measurement(d0.uuid, problem_key(0), config_key(2), 0.130, 1e-6);
  auto over = sample_measurement(d0.uuid, problem_key(0), config_key(3), 0.050, 4e-3);
  over.verdict = "outside";
  auto fault = sample_measurement(d0.uuid, problem_key(0), config_key(4), 0, 0);
  fault.status = MeasureStatus::kFaulted;
  fault.detail = "CUDA_ERROR_ILLEGAL_ADDRESS, \"launch 3\"";
  auto p1 = sample_measurement(d0.uuid, problem_key(1), config_key(0), 0.5, 1e-6);
  auto old = sample_measurement(d1.uuid, problem_key(0), config_key(0), 0.2, 1e-6);
  old.driver_version = 12040;
  REQUIRE(db->add_measurements({a, b, c, over, fault, p1, old}).is_ok());
  BestEntry best = testing::sample_best(d0.uuid, problem_key(0), config_key(1), 1700000100,
                                        a.template_hash, "tie; more accurate");
  best.median_ms = 0.115;
  best.spread_ms = 0.004;
  best.rel_l2 = 1e-7;
  REQUIRE(db->set_best(best).is_ok());
  best.device_uuid = d1.uuid;
  best.config_key = config_key(0);
  best.median_ms = 0.2;
  best.driver_version = 12040;
  REQUIRE(db->set_best(best).is_ok());
}

json parse(const std::string& text) {
  INFO(text);
  json j;
  REQUIRE_NOTHROW(j = json::parse(text));
  return j;
}

size_t lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

TEST_CASE("ssmtune db and each subcommand have help", "[cli]") {
  auto top = run_command(kBin + " db --help");
  CHECK(top.exit_code == 0);
  const char* subs[] = {"list",   "show",   "best",  "explain", "diff",
                        "export", "import", "merge", "prune",   "stale"};
  for (const char* sub : subs) {
    CHECK(top.out.find(sub) != std::string::npos);
    auto h = run_command(kBin + " db " + sub + " --help");
    INFO(sub << ": " << h.out);
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("--db") != std::string::npos);
    CHECK(h.out.find("--format") != std::string::npos);
  }
  CHECK(run_command(kBin + " --help").out.find("db") != std::string::npos);
  auto none = run_command(kBin + " db");
  CHECK(none.exit_code != 0);
  auto unknown = run_command(kBin + " db frobnicate");
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.out.find("frobnicate") != std::string::npos);
  auto extra = run_command(kBin + " db list problems surplus");
  CHECK(extra.exit_code == 2);
  CHECK(extra.out.find("unexpected arguments 'surplus'") != std::string::npos);
  auto option = run_command(kBin + " db show --frob");
  CHECK(option.exit_code == 2);
  CHECK(option.out.find("'--frob'") != std::string::npos);
}

TEST_CASE("ssmtune db list, show and best print table, json and csv", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string with_db = " --db " + db;

  auto table = run_command(kBin + " db list" + with_db, false);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("NVIDIA H200") != std::string::npos);
  CHECK(table.out.find(testing::problem_key(0)) != std::string::npos);
  auto all = parse(run_command(kBin + " db list --format json" + with_db, false).out);
  REQUIRE(all["devices"].size() == 2);
  REQUIRE(all["problems"].size() == 2);
  for (const auto& p : all["problems"])
    if (p["problem"] == testing::problem_key(0)) {
      CHECK(p["measurements"] == 6);
      CHECK(p["ok"] == 5);
      CHECK(p["devices"] == 2);
      CHECK(p["best"] == 2);
    }
  auto csv = run_command(kBin + " db list devices --format csv" + with_db, false);
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("uuid,name,arch,sms,driver,nvrtc,measurements,problems\n", 0) == 0);
  CHECK(lines(csv.out) == 3);
  CHECK(run_command(kBin + " db list --format csv" + with_db).exit_code == 2);
  CHECK(run_command(kBin + " db list gadgets" + with_db).exit_code == 2);

  auto shown = parse(run_command(kBin + " db show --format json" + with_db, false).out);
  CHECK(shown.size() == 7);
  auto faulted =
      parse(run_command(kBin + " db show --status faulted --format json" + with_db, false).out);
  REQUIRE(faulted.size() == 1);
  CHECK(faulted[0]["detail"] == "CUDA_ERROR_ILLEGAL_ADDRESS, \"launch 3\"");
  CHECK(faulted[0]["config"] == testing::config_key(4));
  auto filtered = parse(run_command(kBin + " db show --format json --limit 2 --problem " +
                                        testing::problem_key(0) + " --device " +
                                        testing::sample_device(0).uuid + with_db,
                                    false)
                            .out);
  CHECK(filtered.size() == 2);
  auto show_csv = run_command(kBin + " db show --format csv --status faulted" + with_db, false);
  CHECK(show_csv.out.rfind("time,device,problem,config,status,median_ms", 0) == 0);
  CHECK(show_csv.out.find("\"CUDA_ERROR_ILLEGAL_ADDRESS, \"\"launch 3\"\"\"") != std::string::npos);
  auto show_table = run_command(kBin + " db show" + with_db, false);
  CHECK(show_table.exit_code == 0);
  CHECK(lines(show_table.out) == 9);  // header, rule, 7 rows

  auto best = parse(run_command(kBin + " db best --format json" + with_db + kVersions, false).out);
  REQUIRE(best.size() == 2);
  for (const auto& b : best) {
    const bool old_device = b["device"] == testing::sample_device(1).uuid;
    CHECK(b["stale"] == old_device);
    if (old_device) CHECK(b["stale_why"] == "driver 12040 != 13000");
  }
  auto best_table = run_command(kBin + " db best" + with_db + kVersions, false);
  CHECK(best_table.out.find("tie; more accurate") != std::string::npos);
  auto best_csv = run_command(kBin + " db best --format csv" + with_db + kVersions, false);
  CHECK(best_csv.out.rfind("device,problem,config,median_ms", 0) == 0);
  CHECK(lines(best_csv.out) == 3);
}

TEST_CASE("ssmtune db explain says why a config is selected", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string args = " --db " + db + " --problem " + testing::problem_key(0) + kVersions;
  // Two devices measured it: explain asks which.
  auto ambiguous = run_command(kBin + " db explain" + args);
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.out.find("pick one with --device") != std::string::npos);

  const std::string dev = " --device " + testing::sample_device(0).uuid;
  auto t = run_command(kBin + " db explain" + args + dev, false);
  INFO(t.out);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("selected: " + testing::config_key(1) + ": tie with " + testing::config_key(0) +
                   " within spread 0.004 ms; more accurate") != std::string::npos);
  CHECK(t.out.find("agrees") != std::string::npos);
  CHECK(t.out.find("slower: 0.130 ms vs 0.115 ms") != std::string::npos);
  CHECK(t.out.find("over budget") != std::string::npos);
  CHECK(t.out.find("faulted: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);

  auto j = parse(run_command(kBin + " db explain --format json" + args + dev, false).out);
  CHECK(j["found"] == true);
  CHECK(j["selected"] == testing::config_key(1));
  CHECK(j["stored_agrees"] == true);
  REQUIRE(j["candidates"].size() == 5);
  CHECK(j["candidates"][0]["outcome"] == "selected");
  CHECK(j["candidates"][1]["config"] == testing::config_key(0));

  // A tighter budget changes the selection; the stored entry then differs.
  auto tight = parse(
      run_command(kBin + " db explain --format json --max-error 5e-7" + args + dev, false).out);
  CHECK(tight["selected"] == testing::config_key(1));
  auto tighter = parse(
      run_command(kBin + " db explain --format json --max-error 5e-8" + args + dev, false).out);
  CHECK(tighter["found"] == false);

  // Device 1's only measurement is stale under driver 13.0.
  auto stale = run_command(
      kBin + " db explain" + args + " --device " + testing::sample_device(1).uuid, false);
  CHECK(stale.exit_code == 0);
  CHECK(stale.out.find("no current measurements: 1 stale") != std::string::npos);
  auto csv = run_command(kBin + " db explain --format csv" + args + dev, false);
  CHECK(csv.out.rfind("rank,config,status", 0) == 0);
  CHECK(lines(csv.out) == 6);
}

TEST_CASE("ssmtune db export, import and merge move results", "[cli]") {
  testing::TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), file = dir.file("out.json");
  seed(a);
  auto ex = run_command(kBin + " db export --db " + a + " --output " + file);
  INFO(ex.out);
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("exported 2 devices, 7 measurements and 2 best entries") != std::string::npos);
  auto im = run_command(kBin + " db import " + file + " --db " + b + " --format json", false);
  REQUIRE(im.exit_code == 0);
  auto r = parse(im.out);
  CHECK(r[0]["measurements_added"] == 7);
  CHECK(r[0]["best_added"] == 2);
  auto ja = parse(run_command(kBin + " db export --db " + a, false).out);
  auto jb = parse(run_command(kBin + " db export --db " + b, false).out);
  ja.erase("exported_at");
  jb.erase("exported_at");
  CHECK(ja == jb);
  auto merged = run_command(kBin + " db merge " + file + " --db " + b + " --format csv", false);
  REQUIRE(merged.exit_code == 0);
  CHECK(merged.out.find("0,0,7,0,0,2") != std::string::npos);
  CHECK(run_command(kBin + " db export --format csv --db " + a).exit_code == 2);

  auto diff =
      parse(run_command(kBin + " db diff --format json --db " + a + " --against " + b +
                            " --device " + testing::sample_device(0).uuid + " --against-device " +
                            testing::sample_device(0).uuid + kVersions,
                        false)
                .out);
  REQUIRE(diff.size() == 1);
  CHECK(diff[0]["same_config"] == true);
  CHECK(diff[0]["ratio_b_over_a"] == 1.0);
  auto devices =
      run_command(kBin + " db diff --db " + a + " --device " + testing::sample_device(0).uuid +
                      " --against-device " + testing::sample_device(1).uuid + kVersions,
                  false);
  CHECK(devices.exit_code == 0);
  CHECK(devices.out.find("NVIDIA H100") != std::string::npos);
  CHECK(run_command(kBin + " db diff --db " + a).exit_code == 2);
}

TEST_CASE("ssmtune db prune and stale report what they find", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  auto st = run_command(kBin + " db stale --format json --db " + db + kVersions, false);
  REQUIRE(st.exit_code == 0);
  auto rows = parse(st.out);
  REQUIRE(rows.size() == 2);  // device 1's best entry and its one measurement
  CHECK(rows[0]["kind"] == "best");
  CHECK(rows[1]["kind"] == "measurements");
  CHECK(rows[1]["count"] == 1);
  CHECK(run_command(kBin + " db prune --db " + db).exit_code == 2);
  auto dry = run_command(kBin + " db prune --failed --dry-run --db " + db);
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.find("would remove 1 measurements and 0 best entries") != std::string::npos);
  auto pr =
      run_command(kBin + " db prune --stale --failed --format json --db " + db + kVersions, false);
  REQUIRE(pr.exit_code == 0);
  auto removed = parse(pr.out);
  CHECK(removed[0]["measurements"] == 2);
  CHECK(removed[0]["best"] == 1);
  CHECK(parse(run_command(kBin + " db show --format json --db " + db, false).out).size() == 5);
}

TEST_CASE("ssmtune db refuses bad input with a message and a non-zero exit", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  auto missing = run_command(kBin + " db list --db " + dir.file("nope.db"));
  CHECK(missing.exit_code == 4);  // not found
  CHECK(missing.out.find("no tuning database at") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("nope.db")));
  for (const char* sub : {"show", "best", "stale", "export", "prune --failed"}) {
    INFO(sub);
    CHECK(run_command(kBin + " db " + sub + " --db " + dir.file("nope.db")).exit_code == 4);
  }

  const std::string corrupt = dir.file("corrupt.db");
  std::string bytes(3000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  testing::write_file(corrupt, bytes);
  for (const char* sub : {"list", "import " /* + file below */}) {
    const std::string cmd = std::string(sub) == "list"
                                ? kBin + " db list --db " + corrupt
                                : kBin + " db import " + dir.file("x.json") + " --db " + corrupt;
    if (std::string(sub) != "list") {
      auto ok = run_command(kBin + " db export --db " + db + " -o " + dir.file("x.json"));
      REQUIRE(ok.exit_code == 0);
    }
    auto r = run_command(cmd);
    INFO(r.out);
    CHECK(r.exit_code == 5);  // corrupt database
    CHECK(r.out.find("not an sqlite database or is corrupt") != std::string::npos);
    CHECK(lines(r.out) == 1);
  }
  CHECK(testing::read_file(corrupt) == bytes);

  auto fmt = run_command(kBin + " db list --format xml --db " + db);
  CHECK(fmt.exit_code == 2);
  CHECK(fmt.out.find("unknown format 'xml'") != std::string::npos);
  auto unknown =
      run_command(kBin + " db explain --problem " + testing::problem_key(9) + " --db " + db);
  CHECK(unknown.exit_code == 4);
  CHECK(unknown.out.find("no problem '" + testing::problem_key(9) + "'") != std::string::npos);
  auto malformed = run_command(kBin + " db show --problem b1.d2 --db " + db);
  CHECK(malformed.exit_code == 2);
  CHECK(malformed.out.find("bad problem key 'b1.d2'") != std::string::npos);
  CHECK(run_command(kBin + " db explain --db " + db).exit_code == 2);
  auto status = run_command(kBin + " db show --status exploded --db " + db);
  CHECK(status.exit_code == 2);
  CHECK(status.out.find("unknown measurement status 'exploded'") != std::string::npos);
  CHECK(run_command(kBin + " db show --device GPU-none --db " + db).exit_code == 4);
  CHECK(run_command(kBin + " db best --driver banana --db " + db).exit_code == 2);

  testing::write_file(dir.file("bad.json"), "{\"application\": \"ssmtune\", ");
  auto bad_json = run_command(kBin + " db import " + dir.file("bad.json") + " --db " + db);
  CHECK(bad_json.exit_code == 3);  // bad input
  CHECK(bad_json.out.find("is not valid JSON") != std::string::npos);
  testing::write_file(dir.file("foreign.json"), "[1, 2, 3]");
  auto foreign = run_command(kBin + " db merge " + dir.file("foreign.json") + " --db " + db);
  CHECK(foreign.exit_code == 3);
  CHECK(foreign.out.find("not an ssmtune export") != std::string::npos);
  auto absent = run_command(kBin + " db import " + dir.file("absent.json") + " --db " + db);
  CHECK(absent.exit_code == 4);
  CHECK(absent.out.find("no file") != std::string::npos);
}

TEST_CASE("ssmtune db works across families and shows each output's error", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string bwd = "bwd:b2.d48.l17.n16.g1.fp32";
  {
    auto tdb = cache::TuningDb::open(db, cache::OpenMode::kReadWrite);
    REQUIRE(tdb.is_ok());
    auto m = testing::sample_measurement(testing::sample_device(0).uuid, bwd,
                                         "seq.K64.D8.fp32.t32.s4.fast", 0.3);
    m.family = "bwd";
    m.errors[0].output = "du";
    OutputError dA = m.errors[0];
    dA.output = "dA";
    dA.rel_l2 = 5e-6;
    m.errors.push_back(dA);
    summarize_errors(m);
    REQUIRE(tdb->add_measurement(m).is_ok());
    auto b = testing::sample_best(m.device_uuid, bwd, "seq.K64.D8.fp32.t32.s4.fast", 1700000200,
                                  m.template_hash);
    b.family = "bwd";
    REQUIRE(tdb->set_best(b).is_ok());
  }
  const std::string with_db = " --db " + db;
  auto problems = parse(run_command(kBin + " db list problems --format json" + with_db, false).out);
  CHECK(problems.size() == 3);
  auto bwd_only = parse(
      run_command(kBin + " db list problems --family bwd --format json" + with_db, false).out);
  REQUIRE(bwd_only.size() == 1);
  CHECK(bwd_only[0]["problem"] == bwd);
  CHECK(bwd_only[0]["family"] == "bwd");

  auto shown =
      parse(run_command(kBin + " db show --family bwd --format json" + with_db, false).out);
  REQUIRE(shown.size() == 1);
  REQUIRE(shown[0]["errors"].size() == 2);
  CHECK(shown[0]["errors"][1]["output"] == "dA");
  CHECK(shown[0]["errors"][1]["rel_l2"] == 5e-6);
  CHECK(shown[0]["rel_l2"] == 5e-6);  // the headline: furthest into its budget
  auto fwd = parse(run_command(kBin + " db show --family fwd --format json --problem " +
                                   testing::problem_key(0) + with_db,
                               false)
                       .out);
  REQUIRE(fwd.size() == 6);
  CHECK(fwd[0]["errors"].size() == 2);  // out and out_z
  CHECK(fwd[0]["errors"][0]["max_abs_rel"] == fwd[0]["errors"][0]["rel_l2"].get<double>() * 3);
  // A table: a column per output; CSV: a column per field of each output.
  auto table = run_command(kBin + " db show --problem " + testing::problem_key(0) + with_db, false);
  INFO(table.out);
  const std::string header = table.out.substr(0, table.out.find('\n'));
  CHECK(header.find(" out ") != std::string::npos);
  CHECK(header.find(" out_z ") != std::string::npos);
  CHECK(table.out.find("3.1e-6 inside") != std::string::npos);
  auto csv = run_command(kBin + " db show --format csv --family bwd" + with_db, false);
  CHECK(csv.out.find("du.rel_l2,du.max_abs_rel,du.max_rel,du.nan_inf,du.unwritten,du.budget,"
                     "du.verdict,dA.rel_l2") != std::string::npos);

  // A key without its prefix is a forward key.
  const std::string legacy = testing::problem_key(0).substr(4);
  auto explained = run_command(kBin + " db explain --problem " + legacy + " --device " +
                                   testing::sample_device(0).uuid + with_db + kVersions,
                               false);
  CHECK(explained.exit_code == 0);
  CHECK(explained.out.find("problem:  " + testing::problem_key(0)) != std::string::npos);
  CHECK(explained.out.find("out_z") != std::string::npos);
  auto bwd_explained = parse(
      run_command(kBin + " db explain --format json --problem " + bwd + with_db + kVersions, false)
          .out);
  CHECK(bwd_explained["selected"] == "seq.K64.D8.fp32.t32.s4.fast");
  CHECK(bwd_explained["candidates"][0]["errors"].size() == 2);

  auto best = parse(
      run_command(kBin + " db best --format json --family bwd" + with_db + kVersions, false).out);
  REQUIRE(best.size() == 1);
  CHECK(best[0]["problem"] == bwd);
  CHECK(parse(run_command(kBin + " db best --format json --family fwd" + with_db + kVersions, false)
                  .out)
            .size() == 2);
  CHECK(
      parse(run_command(kBin + " db stale --format json --family bwd" + with_db + kVersions, false)
                .out)
          .empty());

  // Export (format 2) and import keep both families and every error.
  const std::string file = dir.file("out.json"), other = dir.file("b.db");
  REQUIRE(run_command(kBin + " db export" + with_db + " -o " + file).exit_code == 0);
  auto exported = parse(testing::read_file(file));
  CHECK(exported["format"] == 2);
  REQUIRE(run_command(kBin + " db import " + file + " --db " + other).exit_code == 0);
  auto again = parse(run_command(kBin + " db export --db " + other, false).out);
  exported.erase("exported_at");
  again.erase("exported_at");
  CHECK(exported == again);
}

TEST_CASE("ssmtune db finds the database through SSMTUNE_DB", "[cli]") {
  testing::TempDir dir;
  const std::string db = dir.file("env.db");
  seed(db);
  auto r = run_command("SSMTUNE_DB=" + db + " " + kBin + " db list problems --format json", false);
  REQUIRE(r.exit_code == 0);
  CHECK(parse(r.out).size() == 2);
  // --db wins over the environment.
  auto flag = run_command("SSMTUNE_DB=" + dir.file("other.db") + " " + kBin +
                              " db list problems --format json --db " + db,
                          false);
  CHECK(flag.exit_code == 0);
}

TEST_CASE("db merge folds a tuning database file into another: shards, local into shared",
          "[cli][layers]") {
  testing::TempDir dir;
  const std::string local = dir.file("local.db"), shared = dir.file("shared.db");
  seed(local);
  // The shared database has one best entry of its own, and is older.
  {
    auto db = cache::TuningDb::open(shared, cache::OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(db->upsert_device(testing::sample_device(0)).is_ok());
    REQUIRE(db->set_best(testing::sample_best(testing::sample_device(0).uuid,
                                              testing::problem_key(5), testing::config_key(2)))
                .is_ok());
  }
  const std::string local_bytes = testing::read_file(local);
  auto merged =
      run_command(kBin + " db merge " + local + " --db " + shared + " --format json", false);
  REQUIRE(merged.exit_code == 0);
  auto r = parse(merged.out);
  CHECK(r[0]["measurements_added"] == 7);
  CHECK(r[0]["best_added"] == 2);
  CHECK(testing::read_file(local) == local_bytes);  // the source is only read
  auto shared_db = cache::TuningDb::open(shared, cache::OpenMode::kReadOnly);
  REQUIRE(shared_db.is_ok());
  auto best = shared_db->list_best(testing::sample_versions());
  REQUIRE(best.is_ok());
  CHECK(best->size() == 3);
  // Again: nothing new.
  auto again = parse(
      run_command(kBin + " db merge " + local + " --db " + shared + " --format json", false).out);
  CHECK(again[0]["measurements_skipped"] == 7);
  CHECK(again[0]["measurements_added"] == 0);

  // Into itself: refused, nothing changes.
  auto self = run_command(kBin + " db merge " + shared + " --db " + shared);
  CHECK(self.exit_code == 2);
  CHECK(self.out.find("into itself") != std::string::npos);

  // A list as --db: merged into its local (first) database, said so.
  const std::string third = dir.file("third.db");
  auto listed = run_command(kBin + " db merge " + local + " --db " + third + ":" + shared);
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("the local database " + third) != std::string::npos);
  CHECK(std::filesystem::exists(third));

  // A shard database of an older schema is refused as input, unchanged.
  const std::string old = dir.file("old.db");
  {
    auto c = cache::Connection::open(old, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    REQUIRE(c.is_ok());
    REQUIRE(c->exec(testing::kSchemaV1).is_ok());
  }
  const std::string old_bytes = testing::read_file(old);
  auto refused = run_command(kBin + " db merge " + old + " --db " + shared);
  CHECK(refused.exit_code == 3);
  CHECK(refused.out.find(old) != std::string::npos);
  CHECK(testing::read_file(old) == old_bytes);
}

TEST_CASE("db commands given a database list work on its local database", "[cli][layers]") {
  testing::TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  seed(a);
  auto list = run_command(kBin + " db list --db " + a + ":" + b + " --format json");
  INFO(list.out);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("note: this command works on one file, the local database " + a) !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(b));
  auto bad = run_command(kBin + " db list --db " + a + ":");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("empty path") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
