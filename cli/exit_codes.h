// The exit codes of the ssmtune command, one per class of failure, and the
// map from a Status to its code. The README's table lists the same values.
#pragma once

#include "ssmtune/status.h"

namespace ssmtune::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // an unexpected failure: a bug, a CUDA or compile error, a timeout
  kExitUsage = 2,     // bad options or option values (run the command with --help)
  kExitBadInput = 3,  // an input file is invalid: malformed JSON, refused values, a directory
  kExitNotFound = 4,  // no such database, problem, device, file or config
  kExitCorrupt = 5,   // the database is damaged or is not an ssmtune database
  kExitNoGpu = 6,     // no CUDA driver or no usable GPU
  kExitIoError = 7,   // a read or write failed (disk full, permission, closed stdout)
};

// Status codes as exit codes. kInvalidArgument is a usage error here; a
// command reading a file reports it with kExitBadInput instead.
inline int exit_code_for(Code c) {
  switch (c) {
    case Code::kOk:
      return kExitOk;
    case Code::kInvalidArgument:
      return kExitUsage;
    case Code::kNotFound:
      return kExitNotFound;
    case Code::kCorrupt:
      return kExitCorrupt;
    case Code::kNoDriver:
      return kExitNoGpu;
    case Code::kIoError:
      return kExitIoError;
    case Code::kUnsupported:  // a newer schema or export format: input this build cannot read
      return kExitBadInput;
    case Code::kCompileError:
    case Code::kCudaError:
    case Code::kTimeout:
    case Code::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace ssmtune::cli
