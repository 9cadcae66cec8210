// Opening a tuning database for reading only, also where this process may
// not write anything: a WAL database in a read-only directory (a shared
// database on a cluster file system) cannot get the -shm index a WAL
// reader needs. There the file is opened immutable, which is safe only
// because nothing can be writing it: see docs/reliability.md.
#pragma once

#include <string>

#include "cache/sqlite.h"
#include "ssmtune/status.h"

namespace ssmtune::cache {

// A read-only connection to the existing file `path`: sqlite's mode=ro,
// else (the WAL index cannot be created, and no un-checkpointed WAL holds
// commits the file lacks) immutable=1. `immutable` (may be null) says which.
// A WAL with commits beside a read-only directory is kIoError, naming what
// to do. A file that is not a database opens; its first read fails. The
// connection waits up to `busy_timeout_ms` for a lock, from its first read
// on: a writer checkpointing at that moment is waited for, not taken for
// an index this user cannot create.
Result<Connection> open_read_only(const std::string& path, int busy_timeout_ms,
                                  bool* immutable = nullptr);

// "file:" URI for `path` with `query` ("mode=ro"), escaping %, ? and #.
std::string sqlite_uri(const std::string& path, const std::string& query);

}  // namespace ssmtune::cache
