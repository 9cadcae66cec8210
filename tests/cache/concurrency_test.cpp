// Several processes writing one database at once, and a process killed in
// the middle of its writes.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"

namespace ssmtune::cache {
namespace {

using testing::config_key;
using testing::problem_key;
using testing::sample_device;
using testing::sample_measurement;

// Runs `body` in a child process; the child exits 0 when it returns ok, 1
// (after printing the error) otherwise, without running the parent's
// teardown. No connection crosses the fork: the child opens its own.
template <typename Fn>
pid_t spawn(Fn body) {
  const pid_t pid = fork();
  if (pid == 0) {
    Status s = body();
    if (!s.is_ok()) fprintf(stderr, "child %d: %s\n", getpid(), s.to_string().c_str());
    _exit(s.is_ok() ? 0 : 1);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Status write_rows(const std::string& path, int child, int rows) {
  SSMTUNE_ASSIGN_OR_RETURN(TuningDb db, TuningDb::open(path, OpenMode::kReadWrite));
  SSMTUNE_RETURN_IF_ERROR(db.upsert_device(sample_device(child % 2)));
  for (int i = 0; i < rows; ++i) {
    // Children share problems and configs, so the upserts collide too.
    auto m = sample_measurement(sample_device(child % 2).uuid, problem_key(i % 7),
                                config_key(i % 11), 0.1 + i, 1e-6, 1700000000 + i);
    m.detail = "child " + std::to_string(child) + " row " + std::to_string(i);
    SSMTUNE_RETURN_IF_ERROR(db.add_measurement(m));
  }
  return Status::ok();
}

TEST_CASE("four processes writing at once lose no rows and never fail on a lock", "[cache]") {
  testing::TempDir dir;
  const std::string path = dir.file("shared.db");
  constexpr int kChildren = 4, kRows = 200;
  SECTION("into an existing database") {
    REQUIRE(TuningDb::open(path, OpenMode::kReadWrite).is_ok());
  }
  SECTION("all creating the database at once") {}
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c)
    pids.push_back(spawn([&path, c] { return write_rows(path, c, kRows); }));
  for (pid_t pid : pids) CHECK(wait_exit_code(pid) == 0);

  auto db = TuningDb::open(path, OpenMode::kReadOnly);
  REQUIRE(db.is_ok());
  auto ms = db->measurements();
  REQUIRE(ms.is_ok());
  CHECK(ms->size() == size_t{kChildren * kRows});
  for (int c = 0; c < kChildren; ++c) {
    int n = 0;
    for (const auto& m : *ms) n += m.detail.rfind("child " + std::to_string(c) + " ", 0) == 0;
    CHECK(n == kRows);
  }
  CHECK(db->problems()->size() == 7);
  CHECK(db->check_integrity().is_ok());
}

TEST_CASE("a process killed mid-write leaves a consistent database", "[cache]") {
  testing::TempDir dir;
  const std::string path = dir.file("killed.db");
  {
    auto db = TuningDb::open(path, OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    REQUIRE(db->upsert_device(sample_device()).is_ok());
  }
  constexpr int kBatch = 10;
  // Batches of 10 measurements, each on new problem and config rows: a
  // partial transaction would show up as a count that is not a multiple
  // of 10 or a measurement without its rows.
  const pid_t pid = spawn([&path]() -> Status {
    SSMTUNE_ASSIGN_OR_RETURN(TuningDb db, TuningDb::open(path, OpenMode::kReadWrite));
    for (int b = 0;; ++b) {
      std::vector<Measurement> batch;
      for (int i = 0; i < kBatch; ++i)
        batch.push_back(sample_measurement(sample_device().uuid, problem_key(b * kBatch + i),
                                           config_key(b * kBatch + i), 0.1));
      SSMTUNE_RETURN_IF_ERROR(db.add_measurements(batch));
    }
  });
  // Once the child is writing (it may take a moment to start), let it run
  // for about 200 ms more, then kill it wherever it is.
  {
    auto watch = Connection::open(path, SQLITE_OPEN_READONLY);
    REQUIRE(watch.is_ok());
    REQUIRE(watch->set_busy_timeout(kBusyTimeoutMs).is_ok());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto n = watch->query_int("SELECT count(*) FROM measurements");
      if (n.is_ok() && *n > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));

  auto c = Connection::open(path, SQLITE_OPEN_READWRITE);
  REQUIRE(c.is_ok());
  CHECK(*c->query_text("PRAGMA integrity_check") == "ok");
  CHECK(c->query_text("PRAGMA foreign_key_check")->empty());
  const int64_t n = *c->query_int("SELECT count(*) FROM measurements");
  INFO("measurements committed before the kill: " << n);
  CHECK(n > 0);
  CHECK(n % kBatch == 0);
  CHECK(*c->query_int("SELECT count(*) FROM measurements m WHERE NOT EXISTS (SELECT 1 FROM "
                      "problems p WHERE p.key = m.problem_key) OR NOT EXISTS (SELECT 1 FROM "
                      "configs k WHERE k.key = m.config_key)") == 0);
  CHECK(*c->query_int("SELECT count(*) FROM problems") == n);
  // And it is still usable for writing.
  auto db = TuningDb::open(path, OpenMode::kReadWrite);
  REQUIRE(db.is_ok());
  CHECK(db->add_measurement(
              sample_measurement(sample_device().uuid, problem_key(), config_key(), 0.2))
            .is_ok());
}

}  // namespace
}  // namespace ssmtune::cache
