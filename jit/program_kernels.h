// The kernels a plan names, found in its compiled program (by name
// expression) and in the module loaded from that program's cubin, with
// their images (lowered names, resource reports). Every family's runner
// loads its kernels this way.
#pragma once

#include <vector>

#include "jit/cubin_cache.h"
#include "jit/module.h"
#include "jit/program_builder.h"

namespace ssmtune::jit {

struct ProgramKernels {
  std::vector<Kernel> kernels;      // in the order asked for
  std::vector<KernelImage> images;  // the same order
};

// An error names the first instantiation the program or the module lacks.
Result<ProgramKernels> find_kernels(const Module& module, const CompiledProgram& program,
                                    const std::vector<Instantiation>& wanted);

// Raises each launched kernel's dynamic shared-memory limit where a launch
// asks for more than the 48 KiB every kernel may take without it. Launch:
// any struct with `int kernel` (an index into kernels) and `unsigned
// shared_bytes`.
template <typename Launch>
Status allow_shared_bytes(const std::vector<Kernel>& kernels, const std::vector<Launch>& launches) {
  constexpr unsigned kDefaultLimit = 48 * 1024;
  for (const Launch& l : launches) {
    if (l.kernel < 0 || static_cast<size_t>(l.kernel) >= kernels.size())
      return Status::internal("launch names kernel " + std::to_string(l.kernel) + " of " +
                              std::to_string(kernels.size()));
    if (l.shared_bytes > kDefaultLimit)
      SSMTUNE_RETURN_IF_ERROR(
          kernels[l.kernel].set_max_dynamic_shared(static_cast<int>(l.shared_bytes)));
  }
  return Status::ok();
}

// A plan's kernels (`plan.kernels`, a vector of Instantiation) found as
// find_kernels does, with the shared-memory limit its launches
// (`plan.launches`) need already raised: a family's whole load step.
template <typename Plan>
Result<ProgramKernels> load_plan_kernels(const Module& module, const CompiledProgram& program,
                                         const Plan& plan) {
  SSMTUNE_ASSIGN_OR_RETURN(ProgramKernels found, find_kernels(module, program, plan.kernels));
  SSMTUNE_RETURN_IF_ERROR(allow_shared_bytes(found.kernels, plan.launches));
  return found;
}

}  // namespace ssmtune::jit
