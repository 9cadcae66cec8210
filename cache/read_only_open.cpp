// Read-only opening with the immutable fallback.
#include "cache/read_only_open.h"

#include <sqlite3.h>
#include <sys/stat.h>

namespace ssmtune::cache {

std::string sqlite_uri(const std::string& path, const std::string& query) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%') {
      uri += "%25";
    } else if (c == '?') {
      uri += "%3f";
    } else if (c == '#') {
      uri += "%23";
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

Result<Connection> open_read_only(const std::string& path, int busy_timeout_ms, bool* immutable) {
  if (immutable != nullptr) *immutable = false;
  constexpr int kFlags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  Status why;
  {
    auto c = Connection::open(sqlite_uri(path, "mode=ro"), kFlags);
    if (c) SSMTUNE_RETURN_IF_ERROR(c->set_busy_timeout(busy_timeout_ms));
    if (c) {
      // The first read opens the WAL index when the file is in WAL mode.
      // Only "cannot create or open the WAL index" falls through; with a
      // damaged or foreign file the caller's first read says what it is.
      auto probe = c->query_int("SELECT count(*) FROM sqlite_master");
      if (probe || probe.status().code() != Code::kIoError) return c;
      why = probe.status();
    } else {
      why = c.status();
    }
  }
  if (why.code() != Code::kIoError) return why;
  struct stat st;
  const std::string wal = path + "-wal";
  if (::stat(wal.c_str(), &st) == 0 && st.st_size > 0)
    return Status::io_error(
        path + " has a write-ahead log (" + wal +
        ") that this user cannot index (read-only directory): its last commits are not in the "
        "main file yet. Ask someone with write access to run any ssmtune db write command "
        "(e.g. 'ssmtune db migrate'), which folds the log into the file; sqlite said: " +
        why.message());
  auto c = Connection::open(sqlite_uri(path, "immutable=1"), kFlags);
  if (!c) return c.status();
  SSMTUNE_RETURN_IF_ERROR(c->set_busy_timeout(busy_timeout_ms));
  if (immutable != nullptr) *immutable = true;
  return c;
}

}  // namespace ssmtune::cache
