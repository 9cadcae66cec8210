// Errors as values. A Status is either ok or a code with a message that
// carries the context a user needs to act on it (the argument, the NVRTC log,
// the CUresult name). Result<T> holds a T or a non-ok Status.
// Thread safety: values; safe to copy and move between threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace ssmtune {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // caller passed something wrong (shape, dtype, flag)
  kNotFound,         // a lookup found nothing (database row, file, device)
  kCompileError,     // NVRTC rejected a program; the message holds the log
  kCudaError,        // a Driver API call failed; the message holds the CUresult
  kNoDriver,         // libcuda could not be loaded or has no usable device
  kIoError,          // a file could not be read or written
  kCorrupt,          // stored data is damaged or not ours (database, cubin)
  kUnsupported,      // valid request this build or device cannot serve
  kTimeout,          // a wait ran past its limit (a hung kernel, a stuck worker)
  kInternal,         // a broken invariant inside ssmtune
};

// Stable lower-case name of a code, e.g. "invalid_argument".
const char* to_string(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status compile_error(std::string m) { return {Code::kCompileError, std::move(m)}; }
  static Status cuda_error(std::string m) { return {Code::kCudaError, std::move(m)}; }
  static Status no_driver(std::string m) { return {Code::kNoDriver, std::move(m)}; }
  static Status io_error(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status corrupt(std::string m) { return {Code::kCorrupt, std::move(m)}; }
  static Status unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
  static Status internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status timeout(std::string m) { return {Code::kTimeout, std::move(m)}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid_argument: seqlen must be >= 1" (or "ok").
  std::string to_string() const;

  // The same error with "context: " put in front of the message.
  Status with_context(const std::string& context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.is_ok() && "a Result built from a Status must hold an error");
    if (status_.is_ok()) status_ = Status::internal("Result built from an ok Status");
  }

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(is_ok());
    return *value_;
  }
  const T& value() const& {
    assert(is_ok());
    return *value_;
  }
  T&& value() && {
    assert(is_ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace ssmtune

// Return early from a function returning Status or Result<T> when `expr`
// (a Status) is not ok.
#define SSMTUNE_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    ::ssmtune::Status ssmtune_status_ = (expr);           \
    if (!ssmtune_status_.is_ok()) return ssmtune_status_; \
  } while (0)

#define SSMTUNE_CONCAT_INNER(a, b) a##b
#define SSMTUNE_CONCAT(a, b) SSMTUNE_CONCAT_INNER(a, b)

// `SSMTUNE_ASSIGN_OR_RETURN(auto x, f());` binds x to f()'s value or returns
// its error. `lhs` is a declaration and `tmp` a name: neither can be
// parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SSMTUNE_ASSIGN_OR_RETURN(lhs, expr) \
  SSMTUNE_ASSIGN_OR_RETURN_IMPL(SSMTUNE_CONCAT(ssmtune_result_, __LINE__), lhs, expr)
#define SSMTUNE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.is_ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
