// Reads the machine code of each kernel out of a cubin (an ELF64 image):
// NVIDIA puts each function's SASS in a section named ".text.<mangled>".
// Used to show that batched and separate compilation emit the same code,
// and to report code size. Pure function; thread-safe.
#pragma once

#include <map>
#include <string>

#include "ssmtune/status.h"

namespace ssmtune::jit {

// Lowered name -> bytes of its .text section.
Result<std::map<std::string, std::string>> kernel_code_sections(const std::string& cubin);

}  // namespace ssmtune::jit
