// Careful file input and output for the CLI.
#include "cli/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ssmtune::cli {
namespace {

std::string os_error(const std::string& what, int e) { return what + ": " + std::strerror(e); }

// Writes all of `text` to `fd`; errno on failure.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// `path` with every symlink resolved, also when the final target does not
// exist yet (a dangling link, or a new file in an existing directory).
Result<std::string> resolve(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return Status::io_error(os_error("cannot read the link " + p, errno));
    std::string target(buf, static_cast<size_t>(n));
    if (target.empty() || target[0] != '/') {
      const size_t slash = p.rfind('/');
      if (slash != std::string::npos) target = p.substr(0, slash + 1) + target;
    }
    p = target;
  }
  return Status::io_error("too many levels of symbolic links at " + path);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (a.empty() || b.empty() || ::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Result<std::string> read_input_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return Status::not_found("no file " + path);
    return Status::io_error(os_error("cannot read " + path, e));
  }
  if (S_ISDIR(st.st_mode)) return Status::invalid_argument(path + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return Status::invalid_argument(path + " is not a regular file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::io_error(os_error("cannot read " + path, errno));
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Status::io_error(os_error("cannot read " + path, e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& protect) {
  if (path.empty()) return Status::invalid_argument("empty output path");
  if (same_file(path, protect) || same_file(path, protect + "-wal") ||
      same_file(path, protect + "-shm"))
    return Status::invalid_argument("refusing to write over " + protect +
                                    ", the database being read: give another output file");
  SSMTUNE_ASSIGN_OR_RETURN(std::string target, resolve(path));
  struct stat st;
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return Status::invalid_argument(path + " is a directory: give a file name");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO: written in place (it cannot be replaced).
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::io_error(os_error("cannot open " + path, errno));
    const bool ok = write_all(fd, text);
    const int e = errno;
    if (::close(fd) != 0 && ok) return Status::io_error(os_error("cannot write " + path, errno));
    if (!ok) return Status::io_error(os_error("cannot write " + path, e));
    return Status::ok();
  }
  // A regular file (or a new one): a temporary file beside the target,
  // renamed over it once complete, so a failure leaves the old file whole.
  std::string tmp = target + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return Status::io_error(
        os_error("cannot write " + path + " (no temporary file beside it)", errno));
  if (exists)
    (void)::fchmod(fd, st.st_mode & 07777);
  else
    (void)::fchmod(
        fd, 0666 & ~[] {
          const mode_t m = ::umask(0);
          ::umask(m);
          return m;
        }());
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  int e = errno;
  if (::close(fd) != 0 && ok) ok = false, e = errno;
  if (ok && ::rename(tmp.c_str(), target.c_str()) != 0) ok = false, e = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    return Status::io_error(os_error("cannot write " + path, e));
  }
  return Status::ok();
}

}  // namespace ssmtune::cli
