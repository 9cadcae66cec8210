#include "cache/sqlite.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "cache/db_fixtures.h"

namespace ssmtune::cache {
namespace {

Connection open_rw(const std::string& path) {
  auto c = Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE(c.is_ok());
  return std::move(c).value();
}

TEST_CASE("sqlite statements bind and read every type by index and by name", "[cache]") {
  Connection c = open_rw(":memory:");
  REQUIRE(c.exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n INTEGER)").is_ok());
  auto ins = c.prepare("INSERT INTO t VALUES (?1, ?2, :s, :b, ?5)");
  REQUIRE(ins.is_ok());
  const std::string blob("a\0b\xff", 4);
  REQUIRE(ins->bind(1, int64_t{1} << 40).is_ok());
  REQUIRE(ins->bind(2, 0.125).is_ok());
  REQUIRE(ins->bind(":s", std::string("text")).is_ok());
  auto bi = ins->parameter_index(":b");
  REQUIRE(bi.is_ok());
  REQUIRE(ins->bind_blob(*bi, blob).is_ok());
  REQUIRE(ins->bind_null(5).is_ok());
  REQUIRE(ins->run().is_ok());
  CHECK(c.changes() == 1);
  // Reset clears the bindings: a second row of NULLs, and NaN binds NULL.
  REQUIRE(ins->reset().is_ok());
  REQUIRE(ins->bind(2, std::numeric_limits<double>::quiet_NaN()).is_ok());
  REQUIRE(ins->run().is_ok());
  CHECK(c.last_insert_rowid() == 2);

  auto sel = c.prepare("SELECT i, d, s, b, n FROM t ORDER BY rowid");
  REQUIRE(sel.is_ok());
  CHECK(sel->column_count() == 5);
  auto row = sel->step();
  REQUIRE(row.is_ok());
  REQUIRE(*row);
  CHECK(sel->column_int(0) == int64_t{1} << 40);
  CHECK(sel->column_double(1) == 0.125);
  CHECK(sel->column_text(2) == "text");
  CHECK(sel->column_blob(3) == blob);
  CHECK(sel->column_is_null(4));
  row = sel->step();
  REQUIRE(*row);
  CHECK(std::isnan(sel->column_double(1)));
  CHECK(sel->column_text(2).empty());
  row = sel->step();
  REQUIRE(row.is_ok());
  CHECK_FALSE(*row);
  CHECK(*c.query_int("SELECT count(*) FROM t") == 2);
  CHECK(*c.query_text("SELECT s FROM t WHERE i IS NOT NULL") == "text");
}

TEST_CASE("sqlite errors carry sqlite's message and the SQL", "[cache]") {
  Connection c = open_rw(":memory:");
  auto bad = c.prepare("SELEKT 1");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("syntax error") != std::string::npos);
  CHECK(bad.status().message().find("SELEKT 1") != std::string::npos);
  REQUIRE(c.exec("CREATE TABLE u (k TEXT PRIMARY KEY)").is_ok());
  REQUIRE(c.exec("INSERT INTO u VALUES ('a')").is_ok());
  Status dup = c.exec("INSERT INTO u VALUES ('a')");
  CHECK(dup.code() == Code::kInvalidArgument);
  CHECK(dup.message().find("UNIQUE constraint failed") != std::string::npos);
  CHECK(dup.message().find("SQLITE_CONSTRAINT") != std::string::npos);
  auto st = c.prepare("SELECT ?1");
  REQUIRE(st.is_ok());
  CHECK_FALSE(st->bind(7, int64_t{1}).is_ok());
  CHECK_FALSE(st->parameter_index(":nope").is_ok());
}

TEST_CASE("a transaction rolls back unless committed", "[cache]") {
  Connection c = open_rw(":memory:");
  REQUIRE(c.exec("CREATE TABLE t (x INTEGER)").is_ok());
  {
    auto tx = Transaction::begin(c);
    REQUIRE(tx.is_ok());
    REQUIRE(c.exec("INSERT INTO t VALUES (1)").is_ok());
  }
  CHECK(*c.query_int("SELECT count(*) FROM t") == 0);
  {
    auto tx = Transaction::begin(c, Transaction::Kind::kDeferred);
    REQUIRE(tx.is_ok());
    REQUIRE(c.exec("INSERT INTO t VALUES (2)").is_ok());
    REQUIRE(tx->commit().is_ok());
    CHECK_FALSE(tx->commit().is_ok());  // already finished
  }
  CHECK(*c.query_int("SELECT count(*) FROM t") == 1);
}

TEST_CASE("a writer held off past the busy timeout gets a busy status", "[cache]") {
  testing::TempDir dir;
  const std::string path = dir.file("busy.db");
  Connection a = open_rw(path);
  Connection b = open_rw(path);
  REQUIRE(a.exec("PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER)").is_ok());
  REQUIRE(b.set_busy_timeout(50).is_ok());
  auto held = Transaction::begin(a);
  REQUIRE(held.is_ok());
  auto blocked = Transaction::begin(b);
  REQUIRE_FALSE(blocked.is_ok());
  CHECK(is_busy(blocked.status()));
  CHECK_FALSE(is_busy(Status::io_error("disk full")));
  REQUIRE(held->commit().is_ok());
  CHECK(Transaction::begin(b).is_ok());
}

TEST_CASE("opening a path that cannot be opened fails with the path", "[cache]") {
  auto c = Connection::open("/nonexistent-dir/x/y.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().code() == Code::kIoError);
  CHECK(c.status().message().find("/nonexistent-dir/x/y.db") != std::string::npos);
}

}  // namespace
}  // namespace ssmtune::cache
