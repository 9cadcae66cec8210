// Reading a database as a user who cannot write it: a WAL database in a
// read-only directory opens (immutable) and reads; nothing is created or
// changed; a WAL holding commits is named rather than silently skipped.
// Runs the readers as uid 65534 when the suite runs as root.
#include "cache/read_only_open.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"
#include "support/unprivileged.h"

namespace ssmtune::cache {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// A WAL database with one device and one measurement, closed cleanly.
void seed(const std::string& path) {
  auto db = TuningDb::open(path, OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  REQUIRE(db->upsert_device(testing::sample_device()).is_ok());
  REQUIRE(db->add_measurement(testing::sample_measurement(testing::sample_device().uuid,
                                                          testing::problem_key(),
                                                          testing::config_key(), 0.25))
              .is_ok());
}

TEST_CASE("a WAL database in a read-only directory is read by a user who cannot write",
          "[cache][readonly]") {
  TempDir tmp;
  const std::string dir = tmp.file("shared");
  fs::create_directory(dir);
  const std::string path = dir + "/tuning.db";
  seed(path);
  REQUIRE_FALSE(fs::exists(path + "-wal"));  // folded in on close
  const std::string before = testing::read_file(path);
  ::chmod(tmp.path().c_str(), 0755);
  testing::make_read_only_dir(dir);

  const int rc = testing::run_unprivileged([&] {
    if (::access(dir.c_str(), W_OK) == 0) return 10;  // still writable: not a real test
    auto db = TuningDb::open(path, OpenMode::kReadOnly);
    if (!db) {
      fprintf(stderr, "%s\n", db.status().to_string().c_str());
      return 11;
    }
    auto ms = db->measurements();
    if (!ms || ms->size() != 1 || (*ms)[0].median_ms != 0.25) return 12;
    if (!db->read_only()) return 13;
    if (db->add_measurement((*ms)[0]).is_ok()) return 14;  // refused, not written
    auto v = TuningDb::schema_version_of(path);
    if (!v || *v != kSchemaVersion) return 15;
    // A write open fails and names the database.
    auto w = TuningDb::open(path, OpenMode::kReadWrite);
    if (w.is_ok() || w.status().message().find(path) == std::string::npos) return 16;
    return 0;
  });
  ::chmod(dir.c_str(), 0755);
  if (rc == -1) {
    WARN("skipped: cannot drop root to uid 65534 here");
    return;
  }
  CHECK(rc == 0);
  CHECK(testing::read_file(path) == before);
  CHECK_FALSE(fs::exists(path + "-shm"));
  CHECK_FALSE(fs::exists(path + "-wal"));
}

TEST_CASE("a read-only reader is told about a WAL holding commits it cannot index",
          "[cache][readonly]") {
  TempDir tmp;
  const std::string live = tmp.file("live.db");
  const std::string dir = tmp.file("copy");
  fs::create_directory(dir);
  const std::string path = dir + "/tuning.db";
  {
    // Copy the file and its WAL while a writer holds it open, so the WAL
    // still has the commits (no checkpoint on close yet).
    auto db = TuningDb::open(live, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(db->upsert_device(testing::sample_device()).is_ok());
    REQUIRE(fs::file_size(live + "-wal") > 0);
    fs::copy_file(live, path);
    fs::copy_file(live + "-wal", path + "-wal");
  }
  ::chmod(tmp.path().c_str(), 0755);
  testing::make_read_only_dir(dir);
  const int rc = testing::run_unprivileged([&] {
    auto db = TuningDb::open(path, OpenMode::kReadOnly);
    if (db.is_ok()) {
      // sqlite could read the WAL without an index: then the commit is seen.
      auto d = db->devices();
      return d && d->size() == 1 ? 0 : 20;
    }
    return db.status().message().find("write-ahead log") != std::string::npos ? 0 : 21;
  });
  ::chmod(dir.c_str(), 0755);
  if (rc == -1) {
    WARN("skipped: cannot drop root to uid 65534 here");
    return;
  }
  CHECK(rc == 0);
}

TEST_CASE("sqlite_uri escapes the characters a URI gives meaning to", "[cache][readonly]") {
  CHECK(sqlite_uri("/a b/x?y#z%.db", "mode=ro") == "file:/a b/x%3fy%23z%25.db?mode=ro");
  TempDir tmp;
  const std::string path = tmp.file("odd ?#% name.db");
  seed(path);
  auto db = TuningDb::open(path, OpenMode::kReadOnly);
  REQUIRE(db.is_ok());
  CHECK(db->devices()->size() == 1);
}

}  // namespace
}  // namespace ssmtune::cache
