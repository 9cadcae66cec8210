// Worker process management with fork/exec, pipes and poll.
#include "tuner/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ssmtune {

Result<WorkerClient> WorkerClient::spawn(const std::vector<std::string>& argv) {
  // Close-on-exec pipes: a worker spawned at the same time by another
  // thread (tune --gpus) must not inherit this worker's pipe ends, or this
  // worker's death would not close its output. dup2 onto 0 and 1 clears
  // the flag for the child's own ends.
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  // Built before fork: the child of a process whose other threads compile
  // meanwhile calls only what is safe there (dup2, close, execv, _exit).
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::io_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  WorkerClient w;
  w.pid_ = pid;
  w.to_child_ = in[1];
  w.from_child_ = out[0];
  return w;
}

WorkerClient::WorkerClient(WorkerClient&& o) noexcept
    : pid_(o.pid_),
      to_child_(o.to_child_),
      from_child_(o.from_child_),
      buffer_(std::move(o.buffer_)) {
  o.pid_ = -1;
  o.to_child_ = o.from_child_ = -1;
}

WorkerClient& WorkerClient::operator=(WorkerClient&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = o.pid_;
    to_child_ = o.to_child_;
    from_child_ = o.from_child_;
    buffer_ = std::move(o.buffer_);
    o.pid_ = -1;
    o.to_child_ = o.from_child_ = -1;
  }
  return *this;
}

WorkerClient::~WorkerClient() { stop(); }

void WorkerClient::stop() {
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

Status WorkerClient::send(const nlohmann::json& request) {
  if (to_child_ < 0) return Status::io_error("worker is not running");
  const std::string line = request.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(to_child_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::io_error(std::string("worker pipe closed: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Result<nlohmann::json> WorkerClient::read(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;  // not protocol (e.g. a stray print): skip
      return j;
    }
    if (from_child_ < 0) return Status::io_error("worker is not running");
    const auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      return Status::timeout("no answer from the worker within " + std::to_string(timeout_s) +
                             " s (killed)");
    }
    pollfd p{from_child_, POLLIN, 0};
    const int rc = poll(&p, 1, static_cast<int>(left.count() * 1000) + 1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n <= 0) {
      int status = 0;
      if (pid_ > 0) waitpid(pid_, &status, 0);
      pid_ = -1;
      stop();
      std::string why = WIFSIGNALED(status)
                            ? "killed by signal " + std::to_string(WTERMSIG(status))
                            : "exited with code " + std::to_string(WEXITSTATUS(status));
      return Status::io_error("worker died (" + why + ")");
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace ssmtune
