// Thin RAII layer over the sqlite3 C API: a Connection owns one sqlite3*,
// a Statement one sqlite3_stmt*, a Transaction rolls back unless committed.
// Every return code is checked and turned into a Status carrying
// sqlite3_errmsg and the SQL. Not thread-safe: one Connection per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ssmtune/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ssmtune::cache {

// True when `s` came from SQLITE_BUSY or SQLITE_LOCKED (another process
// holds the lock past the busy timeout): the caller may retry.
bool is_busy(const Status& s);

class Statement;

class Connection {
 public:
  // `flags` are SQLITE_OPEN_* flags (e.g. READONLY, or READWRITE | CREATE).
  static Result<Connection> open(const std::string& path, int flags);

  Connection() = default;
  Connection(Connection&& o) noexcept;
  Connection& operator=(Connection&& o) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();  // closes; never throws

  // How long a statement waits for another connection's lock before failing
  // with SQLITE_BUSY.
  Status set_busy_timeout(int ms);
  // Runs one or more statements that return no rows (DDL, PRAGMA, BEGIN).
  Status exec(const std::string& sql);
  Result<Statement> prepare(const std::string& sql);
  // The first column of the first row of `sql` as text ("" when NULL or no
  // row), e.g. for PRAGMA journal_mode=WAL.
  Result<std::string> query_text(const std::string& sql);
  Result<int64_t> query_int(const std::string& sql);

  int64_t changes() const;  // rows changed by the last statement
  int64_t last_insert_rowid() const;
  bool is_open() const { return db_ != nullptr; }
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  // Status for return code `rc` of an operation on this connection, with
  // sqlite3_errmsg and `what` (the SQL or the call).
  Status error(int rc, std::string_view what) const;

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void close() noexcept;
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement() = default;
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();  // finalizes; never throws

  // Parameters are 1-based, as in sqlite3_bind_*; names include their
  // prefix (":key"). A NaN double binds NULL.
  Status bind(int index, int64_t v);
  Status bind(int index, int v) { return bind(index, int64_t{v}); }
  Status bind(int index, double v);
  Status bind(int index, std::string_view text);
  Status bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Status bind_blob(int index, std::string_view bytes);
  Status bind_null(int index);
  template <typename T>
  Status bind(const char* name, const T& v) {
    SSMTUNE_ASSIGN_OR_RETURN(int index, parameter_index(name));
    return bind(index, v);
  }
  Result<int> parameter_index(const char* name) const;

  // True when a row is ready, false when done.
  Result<bool> step();
  // step() until done, for statements that return no rows.
  Status run();
  // Ready for another step() with the same bindings (clear_bindings too).
  Status reset();

  // Column getters for the current row (0-based). NULL reads as 0, NaN, "".
  int64_t column_int(int col) const;
  double column_double(int col) const;  // NULL -> NaN
  std::string column_text(int col) const;
  std::string column_blob(int col) const;
  bool column_is_null(int col) const;
  int column_count() const;

  const std::string& sql() const { return sql_; }

 private:
  friend class Connection;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  Status check_bind(int rc, int index) const;
  void finalize() noexcept;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// A transaction on a Connection that rolls back when it goes out of scope
// without commit(). Writers use kImmediate so the write lock is taken (and
// waited for, under the busy timeout) up front, not on the first write.
class Transaction {
 public:
  enum class Kind { kDeferred, kImmediate };
  static Result<Transaction> begin(Connection& c, Kind kind = Kind::kImmediate);

  Transaction(Transaction&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();  // rolls back if still open; never throws

  Status commit();

 private:
  explicit Transaction(Connection* c) : c_(c) {}
  Connection* c_ = nullptr;  // null once committed or rolled back
};

}  // namespace ssmtune::cache
