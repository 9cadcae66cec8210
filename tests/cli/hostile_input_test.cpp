// The ssmtune command under careless and hostile input (issue 18): each
// case gets one clear line and the exit code of its class (README), and no
// database is lost or half-written. Read-only cases run as uid 65534 when
// the suite runs as root.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"
#include "support/run_command.h"
#include "support/unprivileged.h"

namespace ssmtune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_command;
const std::string kBin = SSMTUNE_BINARY;

enum {
  kOk = 0,
  kInternal = 1,
  kUsage = 2,
  kBadInput = 3,
  kNotFound = 4,
  kCorrupt = 5,
  kNoGpu = 6,
  kIo = 7
};

size_t lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

void seed(const std::string& path) {
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  const auto d = testing::sample_device();
  REQUIRE(db->upsert_device(d).is_ok());
  REQUIRE(db->add_measurements({testing::sample_measurement(d.uuid, testing::problem_key(),
                                                            testing::config_key(0), 0.2),
                                testing::sample_measurement(d.uuid, testing::problem_key(),
                                                            testing::config_key(1), 0.3)})
              .is_ok());
  REQUIRE(db->set_best(testing::sample_best(d.uuid, testing::problem_key(), testing::config_key(0),
                                            1700000100))
              .is_ok());
}

// An export without its exported_at stamp, to compare database contents.
std::string without_stamp(const std::string& text) {
  json j = json::parse(text);
  j.erase("exported_at");
  return j.dump(2);
}

std::string export_of(const std::string& db) {
  auto r = run_command(kBin + " db export --db " + db, false);
  REQUIRE(r.exit_code == 0);
  return without_stamp(r.out);
}

std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST_CASE("export never destroys the database or the link it writes through", "[cli][hostile]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string before = export_of(db);
  // -o onto the database itself, directly or through a link.
  auto self = run_command(kBin + " db export --db " + db + " -o " + db);
  INFO(self.out);
  CHECK(self.exit_code == kUsage);
  CHECK(self.out.find("refusing to write the export over the database") != std::string::npos);
  CHECK(lines(self.out) == 1);
  fs::create_symlink(db, dir.file("alias.db"));
  CHECK(run_command(kBin + " db export --db " + db + " -o " + dir.file("alias.db")).exit_code ==
        kUsage);
  CHECK(run_command(kBin + " db export --db " + dir.file("alias.db") + " -o " + db).exit_code ==
        kUsage);
  CHECK(export_of(db) == before);

  // A symlink is written through: the link stays, its target changes.
  fs::create_directory(dir.file("real"));
  testing::write_file(dir.file("real/out.json"), "old");
  fs::create_symlink(dir.file("real/out.json"), dir.file("link.json"));
  auto via = run_command(kBin + " db export --db " + db + " -o " + dir.file("link.json"));
  CHECK(via.exit_code == kOk);
  CHECK(fs::is_symlink(dir.file("link.json")));
  CHECK(without_stamp(testing::read_file(dir.file("real/out.json"))) == before);
  // A directory and an empty name are refused.
  CHECK(run_command(kBin + " db export --db " + db + " -o " + dir.path()).exit_code == kUsage);
  CHECK(run_command(kBin + " db export --db " + db + " -o ''").exit_code == kUsage);
  // A device is written in place, never replaced; its write error is reported.
  auto full = run_command(kBin + " db export --db " + db + " -o /dev/full");
  CHECK(full.exit_code == kIo);
  CHECK(full.out.find("No space left on device") != std::string::npos);
  struct stat st;
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(run_command(kBin + " db export --db " + db + " -o /dev/null").exit_code == kOk);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir.path()))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("a failed write to stdout is an I/O error, not success", "[cli][hostile]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  for (const char* cmd : {" db export --db ", " db list --db ", " db show --format json --db "}) {
    // stderr to the pipe, stdout to the full device.
    auto r = run_command(kBin + cmd + db + " 2>&1 >/dev/full", false);
    INFO(cmd << ": " << r.out);
    CHECK(r.exit_code == kIo);
    CHECK(r.out.find("cannot write to standard output") != std::string::npos);
  }
}

TEST_CASE("import refuses files that are not exports without a crash", "[cli][hostile]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string before = export_of(db);
  testing::write_file(dir.file("e.json"), R"({"application":"ssmtune","format":1,"x":1e999})");
  for (const char* sub : {"import", "merge"}) {
    auto huge = run_command(kBin + " db " + sub + " --db " + db + " " + dir.file("e.json"));
    INFO(huge.out);
    CHECK(huge.exit_code == kBadInput);
    CHECK(lines(huge.out) == 1);
    auto d = run_command(kBin + " db " + sub + " --db " + db + " " + dir.path());
    CHECK(d.exit_code == kBadInput);
    CHECK(d.out.find("is a directory") != std::string::npos);
    auto zero = run_command(kBin + " db " + sub + " --db " + db + " /dev/zero");
    CHECK(zero.exit_code == kBadInput);
    CHECK(zero.out.find("not a regular file") != std::string::npos);
  }
  // Under a memory limit, a file too large to parse is one line, not an
  // abort (a document of many small objects, as an export is).
  json many = {{"application", "ssmtune"}, {"format", 1}, {"measurements", json::array()}};
  for (int i = 0; i < 100000; ++i)
    many["measurements"].push_back({{"k", i}, {"s", std::string(400, 'x')}});
  testing::write_file(dir.file("big.json"), many.dump());
  auto oom = run_command("ulimit -v 400000; " + kBin + " db import --db " + db + " " +
                         dir.file("big.json"));
  INFO(oom.out);
  CHECK(oom.exit_code == kIo);
  CHECK(oom.out.find("too large for the memory") != std::string::npos);
  CHECK(lines(oom.out) == 1);
  CHECK(export_of(db) == before);
  // --db naming a directory.
  CHECK(run_command(kBin + " db list --db " + dir.path()).exit_code == kUsage);
}

TEST_CASE("import refuses hostile values and changes nothing", "[cli][hostile]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  const std::string before = export_of(db);
  const json base = json::parse(before);
  struct Case {
    const char* name;
    const char* section;
    const char* field;
    json value;
  };
  const Case cases[] = {
      {"negative time", "measurements", "median_ms", -1.0},
      {"1e308 time", "measurements", "median_ms", 1e308},
      {"negative error", "measurements", "rel_l2", -1e-6},
      {"negative count", "measurements", "repeats", -5},
      {"future timestamp", "best", "timestamp", INT64_MAX},
      {"K0 config", "best", "config_key", "sequential.K0.D8.fp32.t128.i8.s1.fast"},
      {"backward config for a forward problem", "measurements", "config_key",
       "seq.K32.D8.fp32.t32.s4.fast"},
      {"cut to 32 bits", "devices", "driver_version", int64_t{1} << 33},
      {"registers cut", "measurements", "registers", int64_t{1} << 32},
      {"escape codes", "devices", "name", "\u001b]0;pwned\u0007H200\n"},
      {"negative best time", "best", "median_ms", -0.001},
  };
  // Fields of one output's error, in the measurement's "errors" array.
  const Case error_cases[] = {
      {"negative output error", "errors", "rel_l2", -1e-6},
      {"negative budget", "errors", "budget", -2e-5},
      {"negative unwritten", "errors", "unwritten", -1},
      {"escape in a verdict", "errors", "verdict", "in\u001b[2Jside"},
  };
  for (const auto& c : error_cases) {
    json f = base;
    f["measurements"][0]["errors"][0][c.field] = c.value;
    f["measurements"][0]["timestamp"] = 1700000555;
    testing::write_file(dir.file("bad.json"), f.dump());
    for (const char* sub : {"import", "merge"}) {
      auto r = run_command(kBin + " db " + sub + " --db " + db + " " + dir.file("bad.json"));
      INFO(c.name << " (" << sub << "): " << r.out);
      CHECK(r.exit_code == kBadInput);
      CHECK(lines(r.out) == 1);
      CHECK(r.out.find(std::string("measurements[0].errors[0].") + c.field) != std::string::npos);
    }
  }
  for (const auto& c : cases) {
    json f = base;
    f[c.section][0][c.field] = c.value;
    f["measurements"][0]["timestamp"] = 1700000555;  // a new row, so nothing is a duplicate
    testing::write_file(dir.file("bad.json"), f.dump());
    for (const char* sub : {"import", "merge"}) {
      auto r = run_command(kBin + " db " + sub + " --db " + db + " " + dir.file("bad.json"));
      INFO(c.name << " (" << sub << "): " << r.out);
      CHECK(r.exit_code == kBadInput);
      CHECK(lines(r.out) == 1);
      CHECK(r.out.find(std::string(c.section) + "[0]." + c.field) != std::string::npos);
    }
  }
  CHECK(export_of(db) == before);
  auto best = run_command(kBin + " db best --format json --db " + db +
                              " --driver any --nvrtc any "
                              "--template-hash any",
                          false);
  REQUIRE(best.exit_code == 0);
  for (const auto& b : json::parse(best.out)) CHECK(b["median_ms"].get<double>() >= 0);
}

TEST_CASE("a database holding invalid UTF-8 and escapes can still be exported and listed",
          "[cli][hostile]") {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  seed(db);
  {
    // An older build let these in; write them past the checks.
    sqlite3* c = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &c) == SQLITE_OK);
    REQUIRE(sqlite3_exec(c, "UPDATE devices SET name = CAST(X'48ff32001b5b33316d0a' AS TEXT)",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(c);
  }
  auto e = run_command(kBin + " db export --db " + db, false);
  CHECK(e.exit_code == kOk);
  CHECK(json::accept(e.out));
  auto lj = run_command(kBin + " db list --format json --db " + db, false);
  CHECK(lj.exit_code == kOk);
  CHECK(json::accept(lj.out));
  auto lt = run_command(kBin + " db list devices --db " + db, false);
  CHECK(lt.exit_code == kOk);
  CHECK(lt.out.find('\x1b') == std::string::npos);  // shown as \x1b, not sent raw
  CHECK(lt.out.find("\\x1b") != std::string::npos);
}

TEST_CASE("numeric and problem options are checked", "[cli][hostile]") {
  struct Case {
    std::string args;
    int code;
    const char* says;
  };
  const Case cases[] = {
      {"tune --budget -1", kUsage, "--budget"},
      {"tune --timeout -1", kUsage, "--timeout"},
      {"tune --time-limit nan", kUsage, "--time-limit"},
      {"tune --max-error -1", kUsage, "--max-error"},
      {"compile --family fwd --seqlen 0x10", kUsage, "decimal"},
      {"compile --threads 100000", kUsage, "--threads"},
      {"compile --threads -1", kUsage, "--threads"},
      {"compile --family fwd --problem ''", kUsage, "--problem needs a key"},
      {"compile --family fwd --problem b1.d64.l128.n16.g1.fp32.vB.vC --batch 0", kUsage,
       "--batch cannot be combined"},
      {"compile --family fwd --dim 4294967296", kUsage, "dim must be <= 2147483647"},
      {"compile --family fwd --seqlen 2147483648", kUsage, "seqlen must be <="},
      {"compile --cubin-dir ''", kUsage, "--cubin-dir needs a directory"},
      {"compile --cubin-dir /nonexistent/dir", kNotFound, "No such file or directory"},
      {"compile --cubin-dir /dev/null", kUsage, "not a directory"},
      {"db list --nonsense", kUsage, "nonsense"},
      {"db show --limit -3 --db /nonexistent.db", kUsage, "--limit"},
      {"db prune --older-than -1 --db /nonexistent.db", kUsage, "--older-than"},
      {"db explain --max-error -1 --db /nonexistent.db", kUsage, "--max-error"},
  };
  for (const auto& c : cases) {
    auto r = run_command(kBin + " " + c.args);
    INFO(c.args << " -> " << r.exit_code << ": " << r.out);
    CHECK(r.exit_code == c.code);
    CHECK(r.out.find(c.says) != std::string::npos);
  }
  // 0100 is decimal 100 (CLI11 alone would read octal 64): the problem key shows it.
  // explain takes --format json (it needs a GPU: without one, exit 6 in one line).
  auto ex = run_command(kBin + " explain --format json --seqlen 0100 --db /nonexistent.db");
  INFO(ex.out);
  if (ex.exit_code == kOk) {
    CHECK(json::parse(ex.out)[0]["problem"].get<std::string>().find(".l100.") != std::string::npos);
  } else {
    CHECK(ex.exit_code == kNoGpu);
    CHECK(lines(ex.out) == 1);
  }
}

TEST_CASE("read commands work on a database this user cannot write", "[cli][hostile][readonly]") {
  testing::TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  // The binary, somewhere the unprivileged user can run it from.
  const std::string bin = tmp.file("ssmtune");
  fs::copy_file(kBin, bin);
  ::chmod(bin.c_str(), 0755);
  const std::string dir = tmp.file("shared");
  fs::create_directory(dir);
  const std::string db = dir + "/tuning.db";
  seed(db);
  const std::string before = testing::read_file(db);
  testing::write_file(tmp.file("in.json"), run_command(kBin + " db export --db " + db, false).out);
  const auto files = listing(dir);
  ::chmod(tmp.file("in.json").c_str(), 0644);
  testing::make_read_only_dir(dir);
  if (testing::as_user("true").empty() || run_command(testing::as_user("true")).exit_code != 0) {
    ::chmod(dir.c_str(), 0755);
    WARN("skipped: cannot run commands as uid 65534 here (setpriv missing or not allowed)");
    return;
  }
  const std::string v = " --driver 13.0 --nvrtc 13.0 --template-hash any";
  for (const std::string& cmd :
       std::vector<std::string>{"db list", "db list --format json", "db show", "db best" + v,
                                "db explain --problem " + testing::problem_key() + v, "db export",
                                "db diff --against " + db + v, "db stale" + v,
                                "db prune --failed --stale --dry-run" + v}) {
    auto r = run_command(testing::as_user(bin + " " + cmd + " --db " + db));
    INFO(cmd << ": " << r.out);
    CHECK(r.exit_code == kOk);
  }
  auto imp =
      run_command(testing::as_user(bin + " db import --db " + db + " " + tmp.file("in.json")));
  INFO(imp.out);
  CHECK(imp.exit_code == kIo);
  CHECK(imp.out.find(db) != std::string::npos);  // names the database...
  CHECK(imp.out.find("ssmtune db import: " + tmp.file("in.json")) ==
        std::string::npos);  // not the file
  ::chmod(dir.c_str(), 0755);
  CHECK(testing::read_file(db) == before);
  CHECK(listing(dir) == files);  // nothing created beside it
}

TEST_CASE("read commands never migrate an older schema", "[cli][hostile][readonly]") {
  testing::TempDir dir;
  const std::string db = dir.file("old.db");
  {
    // Version 1 as it shipped (tests/cache/db_fixtures.h), with one device.
    sqlite3* c = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &c) == SQLITE_OK);
    REQUIRE(sqlite3_exec(c, testing::kSchemaV1, nullptr, nullptr, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(c,
                         "INSERT INTO devices VALUES ('GPU-1', 'NVIDIA H200', 9, 0, 132, 13000, "
                         "'13.0')",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(c);
  }
  const std::string before = testing::read_file(db);
  for (const char* cmd : {"db list", "db export", "db show"}) {
    auto r = run_command(kBin + " " + cmd + " --db " + db);
    INFO(r.out);
    CHECK(r.exit_code == kBadInput);
    CHECK(r.out.find("ssmtune db migrate") != std::string::npos);
    CHECK(lines(r.out) == 1);
  }
  CHECK(testing::read_file(db) == before);
  // A write command migrates, and says so.
  fs::copy_file(db, dir.file("old2.db"));
  auto w = run_command(kBin + " db prune --failed --db " + dir.file("old2.db"));
  INFO(w.out);
  CHECK(w.exit_code == kOk);
  CHECK(w.out.find("migrated " + dir.file("old2.db") + " from schema version 1 to") !=
        std::string::npos);
  auto m = run_command(kBin + " db migrate --db " + db);
  INFO(m.out);
  CHECK(m.exit_code == kOk);
  CHECK(m.out.find("migrated from schema version 1") != std::string::npos);
  CHECK(run_command(kBin + " db list --db " + db).exit_code == kOk);
  auto again = run_command(kBin + " db migrate --db " + db);
  CHECK(again.exit_code == kOk);
  CHECK(again.out.find("already at schema version") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune
