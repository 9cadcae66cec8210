// Groups kernel instantiations into NVRTC programs: each program is one
// translation unit including the headers its instantiations need, with up
// to `per_program` name expressions (one parse of the headers serves them
// all). The same name-expression string goes to NVRTC, to lowering and to
// the cache key.
#pragma once

#include <string>
#include <vector>

#include "jit/compiler.h"

namespace ssmtune::jit {

struct Instantiation {
  std::string header;           // template header, e.g. "ssm/fwd_sequential.cuh"
  std::string name_expression;  // e.g. "ssmtune_kernels::linear_recurrence<float, 4>"
};

// per_program == 0 puts everything into one program.
std::vector<ProgramSpec> make_programs(const std::vector<Instantiation>& instantiations,
                                       size_t per_program, const std::string& arch,
                                       const std::string& name_prefix = "ssmtune");

}  // namespace ssmtune::jit
