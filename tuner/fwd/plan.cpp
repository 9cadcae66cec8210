// Launch plans and legality of forward configs.
#include "tuner/fwd/plan.h"

#include <sstream>

#include "ssm/fwd_params.cuh"

namespace ssmtune {
namespace {

bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

const char* in_type(DType t) {
  switch (t) {
    case DType::kF32:
      return "float";
    case DType::kF16:
      return "__half";
    case DType::kBF16:
      return "__nv_bfloat16";
  }
  return "float";
}

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

bool chunk_algo(ScanAlgo a) {
  return a == ScanAlgo::kSequential || a == ScanAlgo::kMultiPass || a == ScanAlgo::kLookback;
}

// Whether the pipelined kernel converts its rows on the way (halves, or a
// delta transform) rather than copying fp32 rows straight into its stages.
bool pipe_converts(const FwdProblem& p) {
  return p.dtype != DType::kF32 || p.has_delta_bias || p.delta_softplus;
}

size_t shared_bytes(const FwdProblem& p, const FwdConfig& c) {
  const int acc_bytes = c.acc == AccType::kF64 ? 8 : 4;
  const int n = static_cast<int>(p.dstate);
  if (c.algo == ScanAlgo::kPipelined)
    return static_cast<size_t>(
        ssmtune_kernels::pipe_smem_layout(n, c.chunk, c.d_step, p.variable_b, p.variable_c, p.has_z,
                                          c.items, static_cast<int>(dtype_bytes(p.dtype)),
                                          pipe_converts(p))
            .bytes);
  if (chunk_algo(c.algo)) {
    const auto l = ssmtune_kernels::chunk_smem_layout(static_cast<int>(p.dstate), c.chunk, c.d_step,
                                                      p.variable_b, p.variable_c);
    return sizeof(float) * static_cast<size_t>(l.floats);
  }
  return ssmtune_kernels::scan_smem_bytes(static_cast<int>(p.dstate), c.chunk, c.d_step, c.threads,
                                          acc_bytes, p.variable_b, p.variable_c,
                                          c.algo == ScanAlgo::kBlelloch);
}

std::string kernel_name(const char* kernel, const std::string& traits) {
  return std::string("ssmtune_kernels::") + kernel + "<" + traits + ">";
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
  switch (c.algo) {
    case ScanAlgo::kSequential:
    case ScanAlgo::kMultiPass:
    case ScanAlgo::kLookback:
      if (!is_pow2(c.n_split) || c.n_split > 32) return bad("n_split must be a power of 2 <= 32");
      if (c.n_split > p.dstate) return bad("n_split exceeds dstate");
      if (c.threads != c.d_step * c.n_split) return bad("threads must equal d_step * n_split");
      if (c.chunk % 4 != 0) return bad("chunk must be a multiple of 4 (vector groups)");
      if (c.algo == ScanAlgo::kSequential ? c.items > 2 : c.items != 1)
        return bad(c.algo == ScanAlgo::kSequential
                       ? "sequential: items (chunks in flight) must be 1 or 2"
                       : "items must be 1 (one chunk per block)");
      break;
    case ScanAlgo::kPipelined: {
      if (!is_pow2(c.n_split) || c.n_split > 32) return bad("n_split must be a power of 2 <= 32");
      if (c.n_split > p.dstate) return bad("n_split exceeds dstate");
      if (c.threads != c.d_step * c.n_split) return bad("threads must equal d_step * n_split");
      if (c.threads + pipe_producers(p) > 1024)
        return bad("pipelined: threads + the producer warps exceed 1024");
      const int piece = 16 / static_cast<int>(dtype_bytes(p.dtype));
      if (c.chunk % piece != 0)
        return bad("pipelined: chunk must be a multiple of " + std::to_string(piece) +
                   " (16-byte copies)");
      if (c.items < 2 || c.items > 4) return bad("pipelined: items (stages) must be 2, 3 or 4");
      break;
    }
    case ScanAlgo::kWarpScan:
      if (c.n_split != 1) return bad("warpscan takes n_split 1");
      if (c.threads != 32 * c.d_step) return bad("warpscan: threads must be 32 * d_step");
      if (c.chunk != 32 * c.items) return bad("warpscan: chunk must be 32 * items");
      break;
    case ScanAlgo::kBlelloch:
      if (c.n_split != 1) return bad("blelloch takes n_split 1");
      if (!is_pow2(c.threads)) return bad("blelloch: threads must be a power of 2");
      if (c.chunk != c.threads * c.items) return bad("blelloch: chunk must be threads * items");
      break;
  }
  const int64_t n_chunks = (p.seqlen + c.chunk - 1) / c.chunk;
  if (c.algo == ScanAlgo::kMultiPass && n_chunks > 65535) return bad("over 65535 chunks (grid z)");
  if (c.algo == ScanAlgo::kLookback &&
      n_chunks * p.batch * p.groups *
              ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step) >
          (int64_t{1} << 31) - 1)
    return bad("too many (chunk, tile) blocks for one grid");
  const size_t smem = shared_bytes(p, c);
  if (max_shared_bytes != 0 && smem > max_shared_bytes)
    return bad("needs " + std::to_string(smem) + " bytes of shared memory, the device allows " +
               std::to_string(max_shared_bytes));
  return Status::ok();
}

std::string traits_expression(const FwdProblem& p, const FwdConfig& c) {
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::ostringstream os;
  os << "ssmtune_kernels::FwdTraits<" << in_type(p.dtype) << ", "
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
  const int acc_bytes = c.acc == AccType::kF64 ? 8 : 4;
  const unsigned tiles = static_cast<unsigned>(
      p.groups * ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), c.d_step));
  const unsigned batch = static_cast<unsigned>(p.batch);
  const unsigned smem = static_cast<unsigned>(shared_bytes(p, c));
  const jit::Dim3 block{static_cast<unsigned>(c.threads)};

  FwdPlan plan;
  plan.n_chunks = static_cast<int>((p.seqlen + c.chunk - 1) / c.chunk);
  plan.max_shared_bytes = smem;
  auto add = [&](const char* kernel) {
    plan.kernels.push_back({kFwdHeader, kernel_name(kernel, traits)});
    return static_cast<int>(plan.kernels.size()) - 1;
  };
  switch (c.algo) {
    case ScanAlgo::kSequential:
      plan.launches.push_back({add("ssm_fwd_sequential"), {tiles, batch}, block, smem});
      break;
    case ScanAlgo::kWarpScan:
      plan.launches.push_back({add("ssm_fwd_warpscan"), {tiles, batch}, block, smem});
      break;
    case ScanAlgo::kPipelined:  // the compute warps, then the producer warps
      plan.launches.push_back({add("ssm_fwd_pipelined"),
                               {tiles, batch},
                               jit::Dim3{static_cast<unsigned>(c.threads + pipe_producers(p))},
                               smem});
      break;
    case ScanAlgo::kBlelloch:
      plan.launches.push_back({add("ssm_fwd_blelloch"), {tiles, batch}, block, smem});
      break;
    case ScanAlgo::kMultiPass: {
      const unsigned chunks = static_cast<unsigned>(plan.n_chunks);
      const int reduce = add("ssm_fwd_multipass_reduce");
      const int scan = add("ssm_fwd_multipass_scan");
      const int output = add("ssm_fwd_multipass_output");
      const int64_t chains = p.batch * p.dim * p.dstate;
      plan.launches.push_back({reduce, {tiles, batch, chunks}, block, smem});
      plan.launches.push_back(
          {scan, {static_cast<unsigned>((chains + 255) / 256)}, jit::Dim3{256}, 0});
      plan.launches.push_back({output, {tiles, batch, chunks}, block, smem});
      plan.carries_bytes = size_t(2) * chains * plan.n_chunks * acc_bytes;
      break;
    }
    case ScanAlgo::kLookback: {
      const int64_t blocks = int64_t{tiles} * batch * plan.n_chunks;
      plan.launches.push_back(
          {add("ssm_fwd_lookback"), {static_cast<unsigned>(blocks)}, block, smem});
      plan.carries_bytes = size_t(3) * blocks * c.d_step * p.dstate * acc_bytes;
      plan.flags_bytes = sizeof(unsigned) * (blocks + 1);  // flags, then the tile counter
      break;
    }
  }
  return plan;
}

jit::Instantiation reference_instantiation(DType dtype) {
  return {kFwdHeader, std::string("ssmtune_kernels::ssm_fwd_reference<") + in_type(dtype) + ">"};
}

}  // namespace ssmtune
