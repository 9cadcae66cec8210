// The decode-step kernel (ssm/step/step_kernel.cuh) run on the host through
// tests/support/cuda_emulation.h against the fp64 reference step: several
// lanes a channel (the shuffle sum), one lane, several passes over dstate,
// an odd dstate (a partial vector), a partial tile of channels, heads
// sharing B/C groups, the three dtypes for inputs and state, vector and
// element-wise state rows, Mamba-2's tied head dims (A and dt broadcast
// with stride 0), D and dt_bias in the input dtype, int32 and int64 state
// indices with padding, and state rows that are not stepped left alone.
// fp64 arithmetic only (the fast exp is inline PTX).
#include "support/cuda_emulation.h"
// clang-format off: the shim must come first
SSMTUNE_EMULATED_KERNELS_BEGIN
#include "ssm/step/step_kernel.cuh"
SSMTUNE_EMULATED_KERNELS_END
// clang-format on

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "support/host_tensors.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
#include "tuner/step/host_inputs.h"
#include "tuner/step/plan.h"
#include "tuner/step/runner.h"

namespace ssmtune::step {
namespace {

using testing::HostTensors;

// Layout variations of one call.
struct Layout {
  bool tied = false;        // A and dt broadcast over headdim (Mamba-2)
  bool weights_in = false;  // D and dt_bias in the input dtype
  bool indices32 = false;   // int32 indices (else int64)
  int64_t state_pad = 0;    // extra elements per state row (0: vector rows)
};

template <typename Tr>
void check_step(StepProblem p, uint64_t seed, Layout lay = {}) {
  StepConfig c;
  c.d_step = Tr::kDStep;
  c.lanes = Tr::kLanes;
  c.vec = Tr::kVec;
  c.acc = StepAcc::kF64;
  p.has_indices = Tr::kIndices;
  INFO("problem " << p.key() << " config " << c.key() << " seed " << seed);
  auto plan = plan_step(p, c);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->kernel.name_expression ==
          "ssmtune_kernels::ssm_step<" + traits_expression(p, c) + ">");
  StepHostInputs in = make_step_inputs(p, seed);
  if (lay.tied) {  // one A and one dt per head: every p of a head reads p = 0
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t q = 0; q < p.headdim; ++q)
        for (int64_t n = 0; n < p.dstate; ++n)
          in.A[static_cast<size_t>((h * p.headdim + q) * p.dstate + n)] =
              in.A[static_cast<size_t>(h * p.headdim * p.dstate)];
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.heads; ++h)
        for (int64_t q = 0; q < p.headdim; ++q)
          in.dt[static_cast<size_t>((b * p.heads + h) * p.headdim + q)] =
              in.dt[static_cast<size_t>((b * p.heads + h) * p.headdim)];
  }
  if (lay.weights_in) {
    for (double& v : in.D) v = round_to(v, p.dtype);
    for (double& v : in.dt_bias) v = round_to(v, p.dtype);
  }
  const StepHostOutputs ref = reference_step(in);

  HostTensors h;
  StepTensors t;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bhp = {p.batch, p.heads, p.headdim};
  // The state with `state_pad` extra elements per row (unaligned rows take
  // the element-wise path).
  const int64_t row = p.dstate + lay.state_pad;
  std::vector<double> padded(static_cast<size_t>(in.rows * p.dim() * row), 7.0);
  for (int64_t r = 0; r < in.rows * p.dim(); ++r)
    for (int64_t n = 0; n < p.dstate; ++n)
      padded[static_cast<size_t>(r * row + n)] = in.state[static_cast<size_t>(r * p.dstate + n)];
  t.state = h.put(padded, p.state_dtype, {in.rows, p.heads, p.headdim, row});
  t.state.shape[3] = p.dstate;
  t.x = h.put(in.x, io, bhp);
  t.dt = h.put(in.dt, io, bhp);
  t.A = h.put(in.A, f32, {p.heads, p.headdim, p.dstate});
  if (lay.tied) {
    t.A.stride[1] = t.A.stride[2] = 0;
    t.dt.stride[2] = 0;
  }
  t.B = h.put(in.B, io, {p.batch, p.groups, p.dstate});
  t.C = h.put(in.C, io, {p.batch, p.groups, p.dstate});
  const DType wt = lay.weights_in ? io : f32;
  if (p.has_d) t.D = h.put(in.D, wt, {p.heads, p.headdim});
  if (p.has_z) t.z = h.put(in.z, io, bhp);
  if (p.has_dt_bias) t.dt_bias = h.put(in.dt_bias, wt, {p.heads, p.headdim});
  t.out = h.out(io, bhp);
  std::vector<int32_t> idx32(in.indices.begin(), in.indices.end());
  if (p.has_indices) {
    t.state_indices.data = lay.indices32 ? static_cast<const void*>(idx32.data())
                                         : static_cast<const void*>(in.indices.data());
    t.state_indices.bytes = lay.indices32 ? 4 : 8;
    t.state_indices.size = p.batch;
  }
  const Status valid = validate_step_tensors(p, t);
  INFO(valid.to_string());
  REQUIRE(valid.is_ok());

  const ssmtune_kernels::SsmStepParams k = make_params(p, t, c);
  // Vector rows where every row starts on a whole vector.
  const bool whole = p.dstate % Tr::kVec == 0;
  CHECK(k.state_vec == (lay.state_pad == 0 && whole ? 1 : 0));
  CHECK(k.a_vec == (!lay.tied && whole ? 1 : 0));
  emulation::launch(plan->grid.x, plan->grid.y, 1, plan->block.x,
                    [&k] { ssmtune_kernels::ssm_step<Tr>(k); });

  // The state back without its padding (the padding must be untouched).
  const auto* raw = static_cast<const unsigned char*>(t.state.data);
  const std::vector<double> got_padded = decode(raw, padded.size(), p.state_dtype);
  std::vector<double> got_state(in.state.size());
  for (int64_t r = 0; r < in.rows * p.dim(); ++r) {
    for (int64_t n = 0; n < p.dstate; ++n)
      got_state[static_cast<size_t>(r * p.dstate + n)] =
          got_padded[static_cast<size_t>(r * row + n)];
    for (int64_t n = p.dstate; n < row; ++n)
      CHECK(got_padded[static_cast<size_t>(r * row + n)] == 7.0);
  }
  const ErrorStats so = score(ref.out, t.out.data, io, 0, 0);
  const ErrorStats ss = score(ref.state, got_state, 0, 0);
  std::printf("%-48s %-22s out rel L2 %.1e state rel L2 %.1e\n", p.key().c_str(), c.key().c_str(),
              so.rel_l2, ss.rel_l2);
  CHECK(so.unwritten == 0);
  CHECK(so.nan_inf == 0);
  // fp64 arithmetic: the error is the storage rounding of out and the state.
  CHECK(so.rel_l2 <= 1.5 * rounding_floor(ref.out, io) + 1e-12);
  CHECK(ss.nan_inf == 0);
  CHECK(ss.rel_l2 <= 1.5 * rounding_floor(ref.state, p.state_dtype) + 1e-12);
  // Rows no entry steps (and padding entries' rows) keep their bits.
  std::vector<bool> stepped(static_cast<size_t>(in.rows), !p.has_indices);
  for (int64_t r : in.indices)
    if (r >= 0) stepped[static_cast<size_t>(r)] = true;
  for (int64_t r = 0; r < in.rows; ++r) {
    if (stepped[static_cast<size_t>(r)]) continue;
    for (int64_t i = 0; i < p.dim() * p.dstate; ++i) {
      const auto at = static_cast<size_t>(r * p.dim() * p.dstate + i);
      REQUIRE(got_state[at] == in.state[at]);
    }
  }
  // Padding entries write out = 0.
  for (int64_t b = 0; b < p.batch; ++b)
    if (p.has_indices && in.indices[static_cast<size_t>(b)] < 0)
      for (int64_t i = 0; i < p.dim(); ++i)
        CHECK(decode(static_cast<const unsigned char*>(t.out.data) +
                         static_cast<size_t>((b * p.dim() + i) * dtype_bytes(io)),
                     1, io)[0] == 0.0);
}

template <typename InT, typename StT, int kN, int kD, int kL, int kV, bool kFlags, bool kIdx>
using Traits = ssmtune_kernels::StepTraits<InT, StT, double, kN, kD, kL, kV, kFlags, kFlags, kFlags,
                                           kFlags, kIdx>;

TEST_CASE("the step kernel matches fp64: Mamba-1 layouts (emulated)", "[step][emulated]") {
  // 4 lanes of 4 states, a partial tile (headdim 12 over tiles of 8).
  check_step<Traits<float, float, 16, 8, 4, 4, true, false>>(
      testing::step_problem(2, 1, 12, 16, 1, DType::kF32, DType::kF32, true), 11);
  // bf16 inputs and state: 2 lanes of 8; element-wise state rows.
  check_step<Traits<__nv_bfloat16, __nv_bfloat16, 16, 16, 2, 8, true, false>>(
      testing::step_problem(2, 1, 20, 16, 1, DType::kBF16, DType::kBF16, true), 12);
  check_step<Traits<__nv_bfloat16, __nv_bfloat16, 16, 16, 2, 8, true, false>>(
      testing::step_problem(2, 1, 20, 16, 1, DType::kBF16, DType::kBF16, true), 13,
      Layout{false, true, false, 3});
  // Odd dstate: the last lane's vector is partial; no flags; fp16 state.
  check_step<Traits<__half, __half, 13, 8, 4, 4, false, false>>(
      testing::step_problem(3, 1, 8, 13, 1, DType::kF16, DType::kF16, false), 14);
  // One lane a channel over 5 passes of 1 state.
  check_step<Traits<float, float, 5, 32, 1, 1, true, false>>(
      testing::step_problem(1, 1, 40, 5, 1, DType::kF32, DType::kF32, true), 15);
}

TEST_CASE("the step kernel matches fp64: heads, groups, tied dims, indices (emulated)",
          "[step][emulated]") {
  // Mamba-2: 4 heads over 2 groups, dstate 64 as 2 passes of 8 lanes x 4.
  check_step<Traits<__nv_bfloat16, float, 64, 4, 8, 4, true, false>>(
      testing::step_problem(2, 4, 6, 64, 2, DType::kBF16, DType::kF32, true), 21);
  // Tied head dims (A, dt broadcast), D and dt_bias in the input dtype.
  check_step<Traits<__nv_bfloat16, float, 64, 4, 8, 4, true, false>>(
      testing::step_problem(2, 4, 6, 64, 2, DType::kBF16, DType::kF32, true), 22,
      Layout{true, true, false, 0});
  // Indices (int64 and int32), the last entry padding; half the rows not stepped.
  check_step<Traits<float, float, 16, 8, 4, 4, true, true>>(
      testing::step_problem(5, 2, 8, 16, 1, DType::kF32, DType::kF32, true), 23);
  check_step<Traits<__half, float, 16, 8, 4, 4, true, true>>(
      testing::step_problem(4, 1, 9, 16, 1, DType::kF16, DType::kF32, true), 24,
      Layout{false, false, true, 0});
  // 32 lanes x 8 states: dstate 256 in one pass.
  check_step<Traits<float, __nv_bfloat16, 256, 1, 32, 8, false, false>>(
      testing::step_problem(1, 2, 3, 256, 1, DType::kF32, DType::kBF16, false), 25);
}

}  // namespace
}  // namespace ssmtune::step
