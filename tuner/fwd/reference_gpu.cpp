// Launch of the fp64 GPU reference.
#include "tuner/fwd/reference_gpu.h"

#include "jit/driver.h"
#include "jit/module.h"
#include "ssm/fwd_params.cuh"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/runner.h"
#include "tuner/scan_params.h"

namespace ssmtune {
namespace {

// Host mirror of ssmtune_kernels::SsmRefParams (fwd_reference.cuh needs CUDA
// headers, so the struct is restated here; the static_assert pins its size).
struct RefParams {
  ssmtune_kernels::SsmFwdParams p;
  int var_b, var_c, has_d, has_z, has_bias, softplus, has_h0;
  double* y;
  double* out_z;
  double* last_state;
};
static_assert(sizeof(RefParams) == sizeof(ssmtune_kernels::SsmFwdParams) + 32 + 24,
              "RefParams must match SsmRefParams");

}  // namespace

Result<FwdHostOutputs> reference_fwd_gpu(jit::Compiler& compiler, const std::string& arch,
                                         const FwdDeviceProblem& dp, CUstream stream) {
  const FwdProblem& p = dp.problem();
  auto specs = jit::make_programs({reference_instantiation(p.dtype)}, 0, arch, "ssm_fwd_ref");
  SSMTUNE_ASSIGN_OR_RETURN(jit::CompiledProgram program, compiler.compile(specs.at(0)));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Module module, jit::Module::load(program.cubin));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Kernel kernel, module.kernel(program.kernels.at(0).lowered_name));

  const size_t rows = static_cast<size_t>(p.batch * p.dim);
  const size_t n = rows * p.seqlen;
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceBuffer y, jit::DeviceBuffer::allocate(n * 8));
  jit::DeviceBuffer out_z;
  if (p.has_z) {
    SSMTUNE_ASSIGN_OR_RETURN(out_z, jit::DeviceBuffer::allocate(n * 8));
  }
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceBuffer last,
                           jit::DeviceBuffer::allocate(rows * p.dstate * 8));

  RefParams r{};
  r.p = make_params(p, dp.tensors());
  set_reference_flags(p, r);
  r.y = y.as<double>();
  r.out_z = out_z.as<double>();
  r.last_state = last.as<double>();
  const unsigned threads = 128;
  SSMTUNE_RETURN_IF_ERROR(
      kernel.launch(jit::Dim3{static_cast<unsigned>((rows + threads - 1) / threads)},
                    jit::Dim3{threads}, 0, stream, r));
  // The stream is non-blocking: the synchronous copies below would not wait for it.
  SSMTUNE_ASSIGN_OR_RETURN(const jit::Driver* d, jit::Driver::get());
  const jit::Driver& drv = *d;
  SSMTUNE_CU(drv.cuStreamSynchronize(stream));
  FwdHostOutputs out;
  out.out.resize(n);
  SSMTUNE_RETURN_IF_ERROR(y.download(out.out));
  if (p.has_z) {
    out.out_z.resize(n);
    SSMTUNE_RETURN_IF_ERROR(out_z.download(out.out_z));
  }
  if (p.return_last_state) {
    out.last_state.resize(rows * p.dstate);
    SSMTUNE_RETURN_IF_ERROR(last.download(out.last_state));
  }
  return out;
}

}  // namespace ssmtune
