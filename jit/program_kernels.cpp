// Finding a plan's kernels in a compiled program and its loaded module.
#include "jit/program_kernels.h"

namespace ssmtune::jit {

Result<ProgramKernels> find_kernels(const Module& module, const CompiledProgram& program,
                                    const std::vector<Instantiation>& wanted) {
  ProgramKernels out;
  out.kernels.reserve(wanted.size());
  out.images.reserve(wanted.size());
  for (const Instantiation& inst : wanted) {
    const KernelImage* image = program.find(inst.name_expression);
    if (image == nullptr) return Status::internal("compiled program lacks " + inst.name_expression);
    SSMTUNE_ASSIGN_OR_RETURN(Kernel kernel, module.kernel(image->lowered_name));
    out.kernels.push_back(kernel);
    out.images.push_back(*image);
  }
  return out;
}

}  // namespace ssmtune::jit
