// The parent's side of the evaluation worker: spawns `ssmtune worker ...`
// with pipes, sends one request line, waits for one answer line under a
// timeout, and kills the worker when it hangs. A dead or killed worker is
// an error the caller records (faulted) before spawning a fresh one.
// Move-only; not thread-safe.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune {

class WorkerClient {
 public:
  static Result<WorkerClient> spawn(const std::vector<std::string>& argv);
  WorkerClient(WorkerClient&& o) noexcept;
  WorkerClient& operator=(WorkerClient&& o) noexcept;
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;
  ~WorkerClient();

  // Reads one line (the greeting, or an answer) within `timeout_s`.
  Result<nlohmann::json> read(double timeout_s);
  Status send(const nlohmann::json& request);
  // Kills and reaps the worker; idempotent.
  void stop();
  bool alive() const { return pid_ > 0; }

 private:
  WorkerClient() = default;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
};

}  // namespace ssmtune
