// Status formatting.
#include "ssmtune/status.h"

namespace ssmtune {

const char* to_string(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kNotFound:
      return "not_found";
    case Code::kCompileError:
      return "compile_error";
    case Code::kCudaError:
      return "cuda_error";
    case Code::kNoDriver:
      return "no_driver";
    case Code::kIoError:
      return "io_error";
    case Code::kCorrupt:
      return "corrupt";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kTimeout:
      return "timeout";
    case Code::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(ssmtune::to_string(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return {code_, context + ": " + message_};
}

}  // namespace ssmtune
