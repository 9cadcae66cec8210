// Launch plans and legality of forward configs.
#include "tuner/fwd/plan.h"

#include <sstream>

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/algorithms.h"

namespace ssmtune {
namespace {

const char* exp_kind(ExpMode e) {
  switch (e) {
    case ExpMode::kAccurate:
      return "ssmtune_kernels::ExpKind::kAccurate";
    case ExpMode::kFast:
      return "ssmtune_kernels::ExpKind::kFast";
    case ExpMode::kPoly:
      return "ssmtune_kernels::ExpKind::kPoly";
  }
  return "";
}

}  // namespace

int pipe_producers(const FwdProblem& p) {
  return ssmtune_kernels::pipe_producer_threads(p.has_z, p.delta_softplus);
}

Status check_config(const FwdProblem& p, const FwdConfig& c, size_t max_shared_bytes) {
  auto bad = [&c](const std::string& why) {
    return Status::invalid_argument("config " + c.key() + ": " + why);
  };
  if (c.chunk < 1 || c.chunk > 4096) return bad("chunk must be in [1, 4096]");
  if (c.d_step < 1 || c.d_step > 64) return bad("d_step must be in [1, 64]");
  if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0)
    return bad("threads must be a multiple of 32 in [32, 1024]");
  if (c.items < 1 || c.items > 64) return bad("items must be in [1, 64]");
  if (c.acc == AccType::kF64 && c.exp_mode != ExpMode::kAccurate)
    return bad("fp64 accumulation needs the accurate exp (the fast ones are fp32)");
  if ((c.exp_mode == ExpMode::kPoly) != (c.poly_share >= 1 && c.poly_share <= 7))
    return bad("the poly exp mode needs a share in [1, 7], the others none");
  if (c.exp_mode != ExpMode::kPoly && c.poly_share != 0) return bad("poly share without poly");
  if (p.batch > 65535) return bad("batch above 65535 (grid y)");
  if (c.algo != ScanAlgo::kSplit && c.segments != 1)
    return bad("segments other than 1 are for split");
  const FwdAlgorithm* algo = find_fwd_algorithm(c.algo);
  if (algo == nullptr) return bad("no such scan algorithm");
  const std::string why = algo->check(p, c);
  if (!why.empty()) return bad(why);
  const size_t smem = algo->shared_bytes(p, c);
  if (max_shared_bytes != 0 && smem > max_shared_bytes)
    return bad("needs " + std::to_string(smem) + " bytes of shared memory, the device allows " +
               std::to_string(max_shared_bytes));
  return Status::ok();
}

std::string traits_expression(const FwdProblem& p, const FwdConfig& c) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::ostringstream os;
  os << "ssmtune_kernels::FwdTraits<" << cuda_type_name(p.dtype) << ", "
     << (c.acc == AccType::kF64 ? "double" : "float") << ", " << p.dstate << ", " << c.chunk << ", "
     << c.d_step << ", " << c.threads << ", " << c.items << ", " << c.n_split << ", "
     << exp_kind(c.exp_mode) << ", " << c.poly_share << ", " << b(p.variable_b) << ", "
     << b(p.variable_c) << ", " << b(p.has_d) << ", " << b(p.has_z) << ", " << b(p.has_delta_bias)
     << ", " << b(p.delta_softplus) << ", " << b(p.return_last_state) << ", "
     << b(p.has_initial_state) << ">";
  return os.str();
}

Result<FwdPlan> plan_fwd(const FwdProblem& p, const FwdConfig& c, size_t max_shared_bytes) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  SSMTUNE_RETURN_IF_ERROR(check_config(p, c, max_shared_bytes));
  const std::string traits = traits_expression(p, c);
  const FwdAlgorithm& algo = *find_fwd_algorithm(c.algo);  // check_config found it
  FwdPlanContext x{p, c, traits};
  x.tiles = static_cast<unsigned>(
      p.groups * ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step));
  x.batch = static_cast<unsigned>(p.batch);
  x.block = jit::Dim3{static_cast<unsigned>(c.threads)};
  x.smem = static_cast<unsigned>(algo.shared_bytes(p, c));
  x.acc_bytes = c.acc == AccType::kF64 ? 8 : 4;

  FwdPlan plan;
  plan.n_chunks = static_cast<int>((p.seqlen + c.chunk - 1) / c.chunk);
  plan.max_shared_bytes = x.smem;
  algo.plan(x, plan);
  return plan;
}

jit::Instantiation reference_instantiation(DType dtype) {
  return {kFwdHeader,
          std::string("ssmtune_kernels::ssm_fwd_reference<") + cuda_type_name(dtype) + ">"};
}

}  // namespace ssmtune
