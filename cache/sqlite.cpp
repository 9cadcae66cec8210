// sqlite3 connection, statement and transaction owners.
#include "cache/sqlite.h"

#include <sqlite3.h>

#include <cmath>
#include <limits>

namespace ssmtune::cache {
namespace {

// Name of the primary result code, for messages a user can search for.
const char* code_name(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
      return "SQLITE_BUSY";
    case SQLITE_LOCKED:
      return "SQLITE_LOCKED";
    case SQLITE_CORRUPT:
      return "SQLITE_CORRUPT";
    case SQLITE_NOTADB:
      return "SQLITE_NOTADB";
    case SQLITE_CONSTRAINT:
      return "SQLITE_CONSTRAINT";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    case SQLITE_MISUSE:
      return "SQLITE_MISUSE";
    case SQLITE_RANGE:
      return "SQLITE_RANGE";
    case SQLITE_MISMATCH:
      return "SQLITE_MISMATCH";
    case SQLITE_ERROR:
      return "SQLITE_ERROR";
    default:
      return "SQLITE_OTHER";
  }
}

Code status_code(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Code::kCorrupt;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return Code::kInvalidArgument;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
      return Code::kIoError;
    default:
      return Code::kInternal;
  }
}

Status make_error(sqlite3* db, int rc, std::string_view what) {
  std::string msg = "sqlite: ";
  msg += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  msg += " [";
  msg += code_name(rc);
  msg += "] in: ";
  msg += what;
  return Status(status_code(rc), std::move(msg));
}

}  // namespace

bool is_busy(const Status& s) {
  const std::string& m = s.message();
  return !s.is_ok() && (m.find("[SQLITE_BUSY]") != std::string::npos ||
                        m.find("[SQLITE_LOCKED]") != std::string::npos);
}

// --- Connection

Result<Connection> Connection::open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = make_error(db, rc, "open " + path);
    sqlite3_close_v2(db);  // a handle is returned even on failure
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  return Connection(db, path);
}

Connection::Connection(Connection&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) {
  o.db_ = nullptr;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    close();
    db_ = o.db_;
    path_ = std::move(o.path_);
    o.db_ = nullptr;
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() noexcept {
  // close_v2 defers the close until the last statement is finalized, so a
  // stray Statement cannot make this fail.
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

Status Connection::error(int rc, std::string_view what) const { return make_error(db_, rc, what); }

Status Connection::set_busy_timeout(int ms) {
  const int rc = sqlite3_busy_timeout(db_, ms);
  return rc == SQLITE_OK ? Status::ok() : error(rc, "sqlite3_busy_timeout");
}

Status Connection::exec(const std::string& sql) {
  if (db_ == nullptr) return Status::internal("sqlite: exec on a closed connection: " + sql);
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::ok() : error(rc, sql);
}

Result<Statement> Connection::prepare(const std::string& sql) {
  if (db_ == nullptr) return Status::internal("sqlite: prepare on a closed connection: " + sql);
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error(rc, sql);
  }
  return Statement(db_, stmt, sql);
}

Result<std::string> Connection::query_text(const std::string& sql) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, prepare(sql));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  return row ? st.column_text(0) : std::string();
}

Result<int64_t> Connection::query_int(const std::string& sql) {
  SSMTUNE_ASSIGN_OR_RETURN(Statement st, prepare(sql));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  return row ? st.column_int(0) : int64_t{0};
}

int64_t Connection::changes() const { return sqlite3_changes64(db_); }
int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

// --- Statement

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
  o.db_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    finalize();
    db_ = o.db_;
    stmt_ = o.stmt_;
    sql_ = std::move(o.sql_);
    o.stmt_ = nullptr;
    o.db_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { finalize(); }

void Statement::finalize() noexcept {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

Status Statement::check_bind(int rc, int index) const {
  if (rc == SQLITE_OK) return Status::ok();
  return make_error(db_, rc, "bind parameter " + std::to_string(index) + " of: " + sql_);
}

Status Statement::bind(int index, int64_t v) {
  return check_bind(sqlite3_bind_int64(stmt_, index, v), index);
}

Status Statement::bind(int index, double v) {
  if (std::isnan(v)) return bind_null(index);
  return check_bind(sqlite3_bind_double(stmt_, index, v), index);
}

Status Statement::bind(int index, std::string_view text) {
  return check_bind(
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

Status Statement::bind_blob(int index, std::string_view bytes) {
  // A zero-length blob, not NULL, for an empty value.
  if (bytes.empty()) return check_bind(sqlite3_bind_zeroblob(stmt_, index, 0), index);
  return check_bind(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
                    index);
}

Status Statement::bind_null(int index) {
  return check_bind(sqlite3_bind_null(stmt_, index), index);
}

Result<int> Statement::parameter_index(const char* name) const {
  const int index = sqlite3_bind_parameter_index(stmt_, name);
  if (index == 0)
    return Status::internal(std::string("sqlite: no parameter ") + name + " in: " + sql_);
  return index;
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return make_error(db_, rc, sql_);
}

Status Statement::run() {
  for (;;) {
    SSMTUNE_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return Status::ok();
  }
}

Status Statement::reset() {
  // sqlite3_reset repeats the last step's error, already reported by step().
  sqlite3_reset(stmt_);
  const int rc = sqlite3_clear_bindings(stmt_);
  return rc == SQLITE_OK ? Status::ok() : make_error(db_, rc, sql_);
}

int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::column_double(int col) const {
  if (column_is_null(col)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, col);
}

std::string Statement::column_text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

std::string Statement::column_blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  if (p == nullptr || n == 0) return {};
  return std::string(static_cast<const char*>(p), n);
}

bool Statement::column_is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

// --- Transaction

Result<Transaction> Transaction::begin(Connection& c, Kind kind) {
  SSMTUNE_RETURN_IF_ERROR(c.exec(kind == Kind::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN"));
  return Transaction(&c);
}

Transaction::~Transaction() {
  // Best effort: if the connection already rolled back (some errors do
  // that on their own) this fails harmlessly.
  if (c_ != nullptr && c_->get() != nullptr && !sqlite3_get_autocommit(c_->get()))
    sqlite3_exec(c_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::commit() {
  if (c_ == nullptr) return Status::internal("sqlite: commit of a finished transaction");
  Status s = c_->exec("COMMIT");
  // After a failed COMMIT the transaction is still open; the destructor
  // rolls it back.
  if (s.is_ok()) c_ = nullptr;
  return s;
}

}  // namespace ssmtune::cache
