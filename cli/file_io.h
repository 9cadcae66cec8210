// Reading an input file and writing an output file for the ssmtune command
// without surprises: a directory or a device is refused as input; an
// output never replaces the database it was made from, a symlink is
// written through (its target changes, the link stays), a device or FIFO is
// written in place, and a regular file is replaced atomically (temp file in
// the same directory, fsync, rename). Errors carry the OS reason.
#pragma once

#include <string>

#include "ssmtune/status.h"

namespace ssmtune::cli {

// The bytes of the regular file `path`. kNotFound when missing,
// kInvalidArgument for a directory or another non-regular file, kIoError
// (with strerror) when it cannot be read.
Result<std::string> read_input_file(const std::string& path);

// Writes `text` to `path` as described above. `protect` (may be empty) is a
// file the output must not be: when `path` names the same file (same device
// and inode, through any links), kInvalidArgument and nothing is written.
Status write_output_file(const std::string& path, const std::string& text,
                         const std::string& protect);

// True when `a` and `b` are the same existing file (device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace ssmtune::cli
