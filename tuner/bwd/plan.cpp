// Launch plans of backward configs.
#include "tuner/bwd/plan.h"

#include <algorithm>
#include <sstream>

namespace ssmtune::bwd {
std::string traits_expression(const BwdProblem& bp, const BwdConfig& c) {
  const FwdProblem& p = bp.fwd;
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::ostringstream os;
  os << "ssmtune_kernels::BwdTraits<" << cuda_type_name(p.dtype) << ", "
     << (c.acc == BwdAcc::kF64 ? "double" : "float") << ", " << p.dstate << ", " << c.chunk << ", "
     << c.d_step << ", " << c.n_split << ", "
     << (c.exp == BwdExp::kFast ? "ssmtune_kernels::ExpKind::kFast"
                                : "ssmtune_kernels::ExpKind::kAccurate")
     << ", " << b(p.variable_b) << ", " << b(p.variable_c) << ", " << b(p.has_d) << ", "
     << b(p.has_z) << ", " << b(p.has_delta_bias) << ", " << b(p.delta_softplus) << ", "
     << b(p.has_initial_state) << ", " << b(bp.has_dlast);
  if (c.algo == BwdAlgo::kWarpScan) {
    os << ", " << c.blocks << ", " << scan_items(c);
  } else if (c.chan != 1) {
    os << ", " << c.blocks << ", 0, " << c.chan;
  } else if (c.blocks != 0) {
    os << ", " << c.blocks;
  }
  os << ">";
  return os.str();
}

std::string kernel_expression(const char* kernel, const BwdProblem& p, const BwdConfig& c) {
  return std::string("ssmtune_kernels::") + kernel + "<" + traits_expression(p, c) + ">";
}

Result<BwdPlan> plan_bwd(const BwdProblem& bp, const BwdConfig& c, size_t max_shared_bytes) {
  SSMTUNE_RETURN_IF_ERROR(bp.validate());
  SSMTUNE_RETURN_IF_ERROR(check_config(bp, c, max_shared_bytes));
  const FwdProblem& p = bp.fwd;
  BwdPlan plan;
  plan.n_chunks = static_cast<int>((p.seqlen + c.chunk - 1) / c.chunk);
  plan.tiles_per_group =
      ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step);
  plan.seg_chunks = plan.n_chunks;
  if (c.algo == BwdAlgo::kMultiPass) {
    plan.seg_chunks = (plan.n_chunks + c.segments - 1) / c.segments;
    plan.segments = (plan.n_chunks + plan.seg_chunks - 1) / plan.seg_chunks;
  }
  plan.scratch = ssmtune_kernels::bwd_scratch_layout(
      p.batch, p.dim, p.groups, p.dstate, p.seqlen, c.chunk, c.d_step, p.variable_b, p.variable_c,
      p.has_d, p.has_delta_bias, c.acc == BwdAcc::kF64 ? 8 : 4, plan.segments,
      c.algo == BwdAlgo::kWarpScan ? c.n_split : 1);
  const unsigned smem = static_cast<unsigned>(shared_bytes(bp, c));
  plan.max_shared_bytes = smem;
  const unsigned tiles = static_cast<unsigned>(p.groups * plan.tiles_per_group);
  const jit::Dim3 block{static_cast<unsigned>(c.threads)};
  auto add = [&](const char* kernel) {
    plan.kernels.push_back({kBwdHeader, kernel_expression(kernel, bp, c)});
    return static_cast<int>(plan.kernels.size()) - 1;
  };
  if (c.algo == BwdAlgo::kWarpScan) {
    // A channel's states over n_split blocks (grid z), then the sum of the
    // groups' du and ddelta terms, a block per (channel, batch, time slice).
    const unsigned groups = static_cast<unsigned>(c.n_split);
    plan.launches.push_back(
        {add("ssm_bwd_warpscan"), {tiles, static_cast<unsigned>(p.batch), groups}, block, smem});
    if (groups > 1) {
      const unsigned warps = ssmtune_kernels::kBwdStateSumThreads / 32;
      plan.bias_slices =
          static_cast<int>(ssmtune_kernels::bwd_state_sum_slices(p.seqlen, c.n_split));
      plan.launches.push_back(
          {add("ssm_bwd_state_sum"),
           {static_cast<unsigned>(p.dim), static_cast<unsigned>(p.batch),
            static_cast<unsigned>(plan.bias_slices)},
           jit::Dim3{static_cast<unsigned>(ssmtune_kernels::kBwdStateSumThreads)},
           static_cast<unsigned>(warps * (c.acc == BwdAcc::kF64 ? 8 : 4))});
    }
  } else if (c.algo == BwdAlgo::kSequential) {
    plan.launches.push_back(
        {add("ssm_bwd_sequential"), {tiles, static_cast<unsigned>(p.batch)}, block, smem});
  } else {
    const jit::Dim3 grid{tiles, static_cast<unsigned>(p.batch),
                         static_cast<unsigned>(plan.segments)};
    const int64_t chains = p.batch * p.dstate * p.dim;
    const int64_t per = ssmtune_kernels::kBwdCombineThreads;
    plan.launches.push_back({add("ssm_bwd_multipass_local"), grid, block, smem});
    plan.launches.push_back({add("ssm_bwd_multipass_combine"),
                             {static_cast<unsigned>((chains + per - 1) / per)},
                             jit::Dim3{static_cast<unsigned>(per)},
                             0});
    plan.launches.push_back({add("ssm_bwd_multipass_chunks"), grid, block, smem});
  }
  const int finalize = add("ssm_bwd_finalize");
  // Finalize: enough blocks for the largest task, grid-stride beyond.
  int64_t largest = p.dim * p.dstate;
  if (p.variable_b || p.variable_c)
    largest = std::max(largest, p.batch * p.groups * p.dstate * p.seqlen);
  const int64_t per = ssmtune_kernels::kBwdFinalizeThreads;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((largest + per - 1) / per, 8192));
  plan.launches.push_back({finalize,
                           {blocks, static_cast<unsigned>(ssmtune_kernels::kBwdFinalizeTasks)},
                           jit::Dim3{static_cast<unsigned>(per)},
                           0});
  return plan;
}

}  // namespace ssmtune::bwd
