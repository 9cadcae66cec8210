// The forward's time-parallel scans run on the host through
// tests/support/cuda_emulation.h against the fp64 reference. The warp scan
// (ssm/fwd_warpscan.cuh): one warp a
// channel (the carried state enters the shuffle scan) and several (the
// warps' totals meet in shared memory, two states a barrier), over several
// chunks with the last one partial, chunks longer than the sequence, a
// partial tile, two groups, an odd dstate (a pass of one state), constant
// B/C, an initial state and the last state, every flag; and a channel's
// states over several blocks (state groups) with the state sum after. Each
// config runs its plan's launches. The block scan (ssm/fwd_blockscan.cuh):
// one to 16 warps a channel, B/C read by each lane, over partial chunks and
// whole warps past the sequence, constant B or C, every flag. Accurate exp
// only (the fast one is inline PTX).
#include "support/cuda_emulation.h"
// clang-format off: the shim must come first
SSMTUNE_EMULATED_KERNELS_BEGIN
#include "ssm/fwd_blockscan.cuh"
#include "ssm/fwd_state_sum.cuh"
#include "ssm/fwd_warpscan.cuh"
SSMTUNE_EMULATED_KERNELS_END
// clang-format on

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "support/host_tensors.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/reference_cpu.h"
#include "tuner/fwd/runner.h"

namespace ssmtune_kernels {
extern float4 smem_raw[1 << 16];  // defined by the backward's emulated test
}  // namespace ssmtune_kernels

namespace ssmtune {
namespace {

using ssmtune_kernels::ExpKind;
using ssmtune_kernels::FwdTraits;
using testing::HostTensors;

// Warpscan traits: kW warps a channel, kItems steps a lane, a channel's
// states over kGroups blocks, every flag of `p`'s kind.
template <typename InT, int kN, int kDStep, int kW, int kItems, bool kVarC, bool kFlags,
          int kGroups = 1>
using WarpScanTraits =
    FwdTraits<InT, float, kN, 32 * kW * kItems, kDStep, 32 * kW * kDStep, kItems, kGroups,
              ExpKind::kAccurate, 0, true, kVarC, kFlags, kFlags, kFlags, kFlags, kFlags, kFlags>;

// Block scan traits: kW warps on one channel, kItems steps a lane.
template <typename InT, int kN, int kW, int kItems, bool kVarB, bool kVarC, bool kFlags>
using BlockScanTraits =
    FwdTraits<InT, float, kN, 32 * kW * kItems, 1, 32 * kW, kItems, 1, ExpKind::kAccurate, 0, kVarB,
              kVarC, kFlags, kFlags, kFlags, kFlags, kFlags, kFlags>;

template <typename Tr, ScanAlgo kAlgo = ScanAlgo::kWarpScan>
void check_scan(const FwdProblem& p, uint64_t seed) {
  constexpr bool kBlock = kAlgo == ScanAlgo::kBlockScan;
  FwdConfig c;
  c.algo = kAlgo;
  c.chunk = Tr::kChunk;
  c.d_step = Tr::kDStep;
  c.threads = Tr::kThreads;
  c.items = Tr::kItems;
  c.n_split = Tr::kNSplit;
  c.acc = AccType::kF32;
  c.exp_mode = ExpMode::kAccurate;
  INFO("problem " << p.key() << " config " << c.key() << " seed " << seed);
  auto plan = plan_fwd(p, c);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->kernels[plan->launches[0].kernel].name_expression ==
          std::string("ssmtune_kernels::") + (kBlock ? "ssm_fwd_blockscan<" : "ssm_fwd_warpscan<") +
              traits_expression(p, c) + ">");
  const FwdHostInputs in = make_inputs(p, seed);
  const FwdHostOutputs ref = reference_fwd(in);
  HostTensors h;
  const FwdTensors t = testing::put_fwd_tensors(h, in);
  const Status valid = validate_fwd_tensors(p, t);
  INFO(valid.to_string());
  REQUIRE(valid.is_ok());

  ssmtune_kernels::SsmFwdParams k = make_params(p, t);
  // NaN in every scratch word: a group's y never written shows in the outputs.
  std::vector<unsigned char> carries(plan->carries_bytes, 0xFF);
  k.carries = carries.data();
  REQUIRE(plan->max_shared_bytes <= sizeof ssmtune_kernels::smem_raw);
  for (const FwdLaunch& launch : plan->launches) {
    const jit::Dim3 g = launch.grid;
    if (plan->kernels[launch.kernel].name_expression.find("ssm_fwd_state_sum<") !=
        std::string::npos) {
      emulation::launch(g.x, g.y, g.z, launch.block.x,
                        [&k] { ssmtune_kernels::ssm_fwd_state_sum<Tr>(k); });
    } else {
      REQUIRE(launch.shared_bytes <= sizeof ssmtune_kernels::smem_raw);
      emulation::launch(
          g.x, g.y, g.z, launch.block.x,
          [&k] {
            if constexpr (kBlock)
              ssmtune_kernels::ssm_fwd_blockscan<Tr>(k);
            else
              ssmtune_kernels::ssm_fwd_warpscan<Tr>(k);
          },
          [] { std::memset(ssmtune_kernels::smem_raw, 0xFF, sizeof ssmtune_kernels::smem_raw); });
    }
  }

  const double budget = p.dtype == DType::kF32 ? 1e-5 : 1e-2;
  const auto expect = [&](const char* name, const std::vector<double>& want, const TensorArg& got) {
    const ErrorStats s = score(want, got.data, got.dtype, 0, 0);
    std::printf("%-44s %-36s %-10s rel L2 %.1e\n", p.key().c_str(), c.key().c_str(), name,
                s.rel_l2);
    INFO(name);
    CHECK(s.unwritten == 0);
    CHECK(s.nan_inf == 0);
    CHECK(s.rel_l2 <= budget);
  };
  expect("out", ref.out, t.out);
  if (p.has_z) expect("out_z", ref.out_z, t.out_z);
  if (p.return_last_state) expect("last_state", ref.last_state, t.last_state);
}

FwdProblem with_flags(FwdProblem p) {
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = true;
  p.has_initial_state = p.return_last_state = true;
  return p;
}

TEST_CASE("the forward warpscan matches fp64 with one warp a channel (emulated)",
          "[fwd][emulated]") {
  // Two groups of 3 channels (a partial tile of 2), 3 chunks of 64 with the last partial.
  check_scan<WarpScanTraits<float, 6, 2, 1, 2, true, true>>(
      with_flags(testing::shape(2, 6, 150, 6, DType::kF32, 2)), 41);
  // Halves at 8 items a lane (the delta and u rows held as loaded a chunk
  // ahead, converted after the chunk before): bf16 over 3 chunks of 256,
  // four-wide rows (600 steps) and rows read element by element (601, the
  // last chunk ending inside a group of 4); fp16 without flags.
  check_scan<WarpScanTraits<__nv_bfloat16, 4, 2, 1, 8, true, true>>(
      with_flags(testing::shape(2, 3, 600, 4, DType::kBF16, 1)), 51);
  check_scan<WarpScanTraits<__nv_bfloat16, 4, 2, 1, 8, true, true>>(
      with_flags(testing::shape(2, 3, 601, 4, DType::kBF16, 1)), 52);
  check_scan<WarpScanTraits<__half, 3, 2, 1, 8, true, false>>(
      testing::shape(1, 4, 530, 3, DType::kF16, 1), 53);
  // Halves at 4 items a lane also read the gate's z at the top of each
  // chunk: bf16, 3 chunks of 128, the last ending inside a group of 4.
  check_scan<WarpScanTraits<__nv_bfloat16, 4, 2, 1, 4, true, true>>(
      with_flags(testing::shape(2, 3, 301, 4, DType::kBF16, 1)), 54);
}

TEST_CASE("the forward warpscan matches fp64 with several warps a channel (emulated)",
          "[fwd][emulated]") {
  // 2 warps a channel, 4 items a lane: chunks of 256, the second partial;
  // two groups of 3 channels over tiles of 2; odd dstate (a pass of one state).
  check_scan<WarpScanTraits<float, 5, 2, 2, 4, true, true>>(
      with_flags(testing::shape(1, 6, 300, 5, DType::kF32, 2)), 42);
  // 4 warps a channel, one channel a block, 2 items a lane: 3 chunks of 256.
  check_scan<WarpScanTraits<float, 4, 1, 4, 2, true, true>>(
      with_flags(testing::shape(2, 2, 700, 4, DType::kF32, 1)), 43);
  // bf16, constant C, no flags; 4 warps a channel over a sequence shorter than
  // one chunk (whole warps past the end).
  FwdProblem q = testing::shape(1, 3, 90, 3, DType::kBF16, 1);
  q.variable_c = false;
  check_scan<WarpScanTraits<__nv_bfloat16, 3, 2, 4, 4, false, false>>(q, 44);
  // 512 threads, the most a block of one channel takes (legal keys, not in
  // the space): 4 items a lane, chunks of 2048 with the second partial, bf16.
  check_scan<WarpScanTraits<__nv_bfloat16, 8, 1, 16, 4, true, true>>(
      with_flags(testing::shape(1, 2, 2500, 8, DType::kBF16, 1)), 45);
  // 2 items a lane (chunks of 1024), fp32, odd dstate, a sequence ending
  // inside the last warps.
  check_scan<WarpScanTraits<float, 5, 1, 16, 2, true, true>>(
      with_flags(testing::shape(2, 1, 1100, 5, DType::kF32, 1)), 46);
}

TEST_CASE("the forward warpscan matches fp64 with its states over several blocks (emulated)",
          "[fwd][emulated]") {
  // 8 states over 4 blocks, 4 warps a channel: 3 chunks of 512 (the last
  // partial), every flag.
  check_scan<WarpScanTraits<float, 8, 1, 4, 4, true, true, 4>>(
      with_flags(testing::shape(2, 2, 1300, 8, DType::kF32, 1)), 47);
  // dstate 5 over 4 blocks (the first runs states 0 and 4: a pass of two,
  // the others one), bf16, 2 warps on each of 2 channels, two groups of 3
  // channels (a partial tile each), every flag.
  check_scan<WarpScanTraits<__nv_bfloat16, 5, 2, 2, 4, true, true, 4>>(
      with_flags(testing::shape(1, 6, 700, 5, DType::kBF16, 2)), 48);
  // One warp a channel (the carried state enters the shuffle scan), 16
  // states over 2 blocks, constant C, fp16, no flags, 3 chunks of 64.
  FwdProblem q = testing::shape(2, 3, 150, 16, DType::kF16, 1);
  q.variable_c = false;
  check_scan<WarpScanTraits<__half, 16, 2, 1, 2, false, false, 2>>(q, 49);
  // 16 warps, 8 states over 8 blocks of one state, bf16, 2 chunks of 2048.
  check_scan<WarpScanTraits<__nv_bfloat16, 8, 1, 16, 4, true, true, 8>>(
      with_flags(testing::shape(1, 2, 2500, 8, DType::kBF16, 1)), 50);
}

TEST_CASE("the forward block scan matches fp64 (emulated)", "[fwd][emulated]") {
  constexpr ScanAlgo kB = ScanAlgo::kBlockScan;
  // 4 warps of 4 steps: chunks of 512, 3 of them with the last partial;
  // two groups of 3 channels, odd dstate, every flag.
  check_scan<BlockScanTraits<float, 5, 4, 4, true, true, true>, kB>(
      with_flags(testing::shape(2, 6, 1100, 5, DType::kF32, 2)), 51);
  // One warp of 16 steps, bf16, chunks of 512 over a sequence ending inside
  // a lane's items (a partial group of 4).
  check_scan<BlockScanTraits<__nv_bfloat16, 8, 1, 16, true, true, true>, kB>(
      with_flags(testing::shape(1, 3, 1030, 8, DType::kBF16, 1)), 52);
  // 4 warps of 16 steps (chunks of 2048) over a shorter sequence: whole
  // warps past the end; fp16, constant B, no flags.
  FwdProblem q = testing::shape(2, 2, 700, 16, DType::kF16, 1);
  q.variable_b = false;
  check_scan<BlockScanTraits<__half, 16, 4, 16, false, true, false>, kB>(q, 53);
  // 16 warps of 4 steps, constant C, fp32, every flag, two chunks.
  FwdProblem r = with_flags(testing::shape(1, 2, 2500, 3, DType::kF32, 1));
  r.variable_c = false;
  check_scan<BlockScanTraits<float, 3, 16, 4, true, false, true>, kB>(r, 54);
  // dstate 4 and 1, rows a chunk ahead (kBlockScanRowsAhead): bf16, 2 warps
  // of 8 steps, three chunks, the last ending inside a lane's items, two
  // groups, every flag; fp16, one warp of 8, constant B, no flags.
  static_assert(ssmtune_kernels::kBlockScanRowsAhead<
                BlockScanTraits<__nv_bfloat16, 4, 2, 8, true, true, true>>);
  check_scan<BlockScanTraits<__nv_bfloat16, 4, 2, 8, true, true, true>, kB>(
      with_flags(testing::shape(2, 4, 1100, 4, DType::kBF16, 2)), 55);
  FwdProblem s = testing::shape(1, 2, 600, 1, DType::kF16, 1);
  s.variable_b = false;
  check_scan<BlockScanTraits<__half, 1, 1, 8, false, true, false>, kB>(s, 56);
  // dstate 8 and 6 at 8 steps a lane: state 0's B row a chunk ahead (fp32,
  // 2 warps, three chunks, every flag; bf16, constant B, two groups).
  static_assert(
      !ssmtune_kernels::kBlockScanRowsAhead<BlockScanTraits<float, 8, 2, 8, true, true, true>>);
  check_scan<BlockScanTraits<float, 8, 2, 8, true, true, true>, kB>(
      with_flags(testing::shape(1, 2, 1100, 8, DType::kF32, 1)), 57);
  FwdProblem c6 = with_flags(testing::shape(2, 4, 1300, 6, DType::kBF16, 2));
  c6.variable_b = false;
  check_scan<BlockScanTraits<__nv_bfloat16, 6, 2, 8, false, true, true>, kB>(c6, 58);
}

}  // namespace
}  // namespace ssmtune
