// The forward's saving variant (SSMTUNE_FWD_SAVES_STATES) run on the host
// through tests/support/cuda_emulation.h: the sequential kernel writes every
// checkpoint of the backward's layout [(b, j - 1, n, d)] (none left
// poisoned, none past the buffer) with the state after j * interval steps
// (the fp64 reference's last state of the sequence cut there), for
// intervals shorter and longer than the kernel's chunk, a partial tile, two
// groups and every flag; and its outputs still match the reference.
// Accurate exp only (the fast one is inline PTX).
#define SSMTUNE_FWD_SAVES_STATES 1
#include "support/cuda_emulation.h"
// clang-format off: the shim must come first
SSMTUNE_EMULATED_KERNELS_BEGIN
#include "ssm/fwd_blockscan.cuh"
#include "ssm/fwd_sequential.cuh"
#include "ssm/fwd_state_sum.cuh"
#include "ssm/fwd_warpscan.cuh"
SSMTUNE_EMULATED_KERNELS_END
// clang-format on

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ssm/bwd/bwd_params.cuh"
#include "support/host_tensors.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
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

// The inputs cut to their first `len` steps (the per-step tensors' rows).
FwdHostInputs prefix(const FwdHostInputs& in, int64_t len) {
  const FwdProblem& p = in.problem;
  FwdHostInputs out = in;
  out.problem.seqlen = len;
  auto cut = [&](const std::vector<double>& v) {
    std::vector<double> r;
    for (size_t row = 0; row < v.size() / static_cast<size_t>(p.seqlen); ++row)
      r.insert(r.end(), v.begin() + static_cast<long>(row * p.seqlen),
               v.begin() + static_cast<long>(row * p.seqlen + len));
    return r;
  };
  out.u = cut(in.u);
  out.delta = cut(in.delta);
  if (p.has_z) out.z = cut(in.z);
  if (p.variable_b) out.B = cut(in.B);
  if (p.variable_c) out.C = cut(in.C);
  return out;
}

// kAlgo: the sequential kernel, the warp scan (ssm_fwd_warpscan) or the
// block scan (ssm_fwd_blockscan).
template <typename Tr, ScanAlgo kAlgo = ScanAlgo::kSequential>
void check_saving(FwdProblem p, int shift, uint64_t seed) {
  constexpr bool kScan = kAlgo == ScanAlgo::kWarpScan;
  constexpr bool kBlock = kAlgo == ScanAlgo::kBlockScan;
  p.return_last_state = true;  // the reference's last state is the checkpoint
  INFO("problem " << p.key() << " interval " << (1 << shift) << " seed " << seed);
  const FwdHostInputs in = make_inputs(p, seed);
  const FwdHostOutputs ref = reference_fwd(in);

  HostTensors h;
  const DType io = p.dtype;
  const FwdTensors t = testing::put_fwd_tensors(h, in);
  const Status valid = validate_fwd_tensors(p, t);
  INFO(valid.to_string());
  REQUIRE(valid.is_ok());

  const int interval = 1 << shift;
  const long long saved_chunks = (p.seqlen + interval - 1) / interval - 1;
  const size_t count = static_cast<size_t>(p.batch * saved_chunks * p.dstate * p.dim);
  REQUIRE(saved_chunks >= 2);
  // A guard past the end: nothing may land there.
  std::vector<float> states(count + 64, std::nanf(""));
  ssmtune_kernels::SsmFwdParams k = make_params(p, t);
  k.states = states.data();
  k.states_shift = shift;

  const int tiles =
      static_cast<int>(p.groups) *
      ssmtune_kernels::tiles_per_group(static_cast<int>(p.dim_per_group()), Tr::kDStep);
  constexpr size_t kSmemBytes =
      kBlock ? static_cast<size_t>(
                   ssmtune_kernels::blockscan_smem_layout(Tr::kN, Tr::kThreads / 32, 4).bytes)
      : kScan ? static_cast<size_t>(
                    ssmtune_kernels::scan_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kThreads,
                                                      4, Tr::kVarB, Tr::kVarC, false, Tr::kNSplit)
                        .bytes)
              : 4 * static_cast<size_t>(ssmtune_kernels::chunk_smem_layout(
                                            Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC)
                                            .floats);
  REQUIRE(kSmemBytes <= sizeof ssmtune_kernels::smem_raw);
  // The warp scan over state groups (grid z): each group's y, then their sum.
  constexpr int kGroups = kScan ? Tr::kNSplit : 1;
  std::vector<float> carries(
      kGroups > 1 ? static_cast<size_t>(kGroups * p.batch * p.dim * p.seqlen) : 0, std::nanf(""));
  k.carries = carries.data();
  emulation::launch(
      static_cast<unsigned>(tiles), static_cast<unsigned>(p.batch), kGroups, Tr::kThreads,
      [&k] {
        if constexpr (kBlock)
          ssmtune_kernels::ssm_fwd_blockscan<Tr>(k);
        else if constexpr (kScan)
          ssmtune_kernels::ssm_fwd_warpscan<Tr>(k);
        else
          ssmtune_kernels::ssm_fwd_sequential<Tr>(k);
      },
      [] { std::memset(ssmtune_kernels::smem_raw, 0xFF, sizeof ssmtune_kernels::smem_raw); });
  if constexpr (kGroups > 1)
    emulation::launch(static_cast<unsigned>(p.dim), static_cast<unsigned>(p.batch),
                      static_cast<unsigned>(ssmtune_kernels::fwd_state_sum_slices(p.seqlen)),
                      ssmtune_kernels::kFwdStateSumThreads,
                      [&k] { ssmtune_kernels::ssm_fwd_state_sum<Tr>(k); });

  for (size_t i = count; i < states.size(); ++i) CHECK(std::isnan(states[i]));
  double worst = 0, scale = 0;
  size_t unwritten = 0;
  for (long long j = 1; j <= saved_chunks; ++j) {
    const FwdHostOutputs cut = reference_fwd(prefix(in, j * interval));
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t n = 0; n < p.dstate; ++n)
        for (int64_t d = 0; d < p.dim; ++d) {
          const float got = states[static_cast<size_t>(
              ssmtune_kernels::bwd_ckpt_index(b, j, n, d, saved_chunks + 1, p.dstate, p.dim))];
          const double want = cut.last_state[static_cast<size_t>((b * p.dim + d) * p.dstate + n)];
          if (std::isnan(got)) {
            ++unwritten;
            continue;
          }
          worst = std::max(worst, std::abs(got - want));
          scale = std::max(scale, std::abs(want));
        }
  }
  std::printf("%-52s interval %3d: %zu states, max |saved - fp64| %.1e of %.1e\n", p.key().c_str(),
              interval, count, worst, scale);
  CHECK(unwritten == 0);
  CHECK(scale > 0);
  CHECK(worst <= 1e-5 * scale);
  // The outputs of the saving variant: the forward's budget, as ever.
  const ErrorStats s = score(ref.out, t.out.data, io, 0, 0);
  CHECK(s.unwritten == 0);
  CHECK(s.rel_l2 <= (io == DType::kF32 ? 1e-5 : 1e-2));
}

TEST_CASE("the forward's saving variant writes every checkpoint (emulated)", "[fwd][emulated]") {
  // Two groups of 12 channels (a partial tile of 8 each), 37 steps, every
  // flag: checkpoints every 8 steps (two per chunk of 16) and every 32
  // (at the end of every other chunk), with and without reads in flight.
  FwdProblem p = testing::shape(2, 24, 37, 16, DType::kF32, 2);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  using Tr = FwdTraits<float, float, 16, 16, 8, 32, 2, 4, ExpKind::kAccurate, 0, true, true, true,
                       true, true, true, true, true>;
  check_saving<Tr>(p, 3, 31);
  p.seqlen = 70;
  check_saving<Tr>(p, 5, 32);
  // bf16, constant C, one read at a time, dstate 5 over 4 lanes (states past dstate).
  FwdProblem q = testing::shape(1, 16, 50, 5, DType::kBF16, 1);
  q.variable_c = false;
  q.has_d = true;
  using Tq = FwdTraits<__nv_bfloat16, float, 5, 8, 8, 32, 1, 4, ExpKind::kAccurate, 0, true, false,
                       true, false, false, false, true, false>;
  check_saving<Tq>(q, 2, 33);
}

TEST_CASE("the warp scan's saving variant writes every checkpoint (emulated)", "[fwd][emulated]") {
  // One warp a channel, 4 steps a lane, chunks of 128: checkpoints every 8
  // steps (every other lane's entry) and every 256 (every other chunk's);
  // two groups of 3 channels over tiles of 2, every flag.
  FwdProblem p = testing::shape(2, 6, 300, 5, DType::kF32, 2);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  using T1 = FwdTraits<float, float, 5, 128, 2, 64, 4, 1, ExpKind::kAccurate, 0, true, true, true,
                       true, true, true, true, true>;
  check_saving<T1, ScanAlgo::kWarpScan>(p, 3, 34);
  p.seqlen = 600;
  check_saving<T1, ScanAlgo::kWarpScan>(p, 8, 35);
  // 4 warps a channel, 8 steps a lane (chunks of 1024 past the sequence):
  // checkpoints every 8 steps, every lane's entry; bf16, constant C.
  FwdProblem q = testing::shape(1, 3, 70, 4, DType::kBF16, 1);
  q.variable_c = false;
  q.has_d = true;
  using T4 = FwdTraits<__nv_bfloat16, float, 4, 1024, 1, 128, 8, 1, ExpKind::kAccurate, 0, true,
                       false, true, false, false, false, true, false>;
  check_saving<T4, ScanAlgo::kWarpScan>(q, 3, 36);
  // 16 warps a channel, 4 steps a lane (chunks of 2048, the default for very
  // few channels past 1024 steps): checkpoints every 512 steps and every
  // 2048 (every chunk's end); every flag, an initial state.
  FwdProblem w = testing::shape(1, 2, 4500, 8, DType::kF32, 1);
  w.has_d = w.has_z = w.has_delta_bias = w.delta_softplus = w.has_initial_state = true;
  using T16 = FwdTraits<float, float, 8, 2048, 1, 512, 4, 1, ExpKind::kAccurate, 0, true, true,
                        true, true, true, true, true, true>;
  check_saving<T16, ScanAlgo::kWarpScan>(w, 9, 37);
  check_saving<T16, ScanAlgo::kWarpScan>(w, 11, 38);
  // The same over 4 blocks of 2 states each (state groups): each writes its
  // states' checkpoints.
  using T16g = FwdTraits<float, float, 8, 2048, 1, 512, 4, 4, ExpKind::kAccurate, 0, true, true,
                         true, true, true, true, true, true>;
  check_saving<T16g, ScanAlgo::kWarpScan>(w, 9, 39);
}

TEST_CASE("the block scan's saving variant writes every checkpoint (emulated)", "[fwd][emulated]") {
  // 4 warps of 4 steps (chunks of 512): checkpoints every 16 steps and every
  // 512 (each chunk's end); two groups of 3 channels, every flag. (Traits
  // unlike those of emulated_scans_test.cpp, which instantiates the plain
  // kernel: one template instance per traits in the test binary.)
  FwdProblem p = testing::shape(2, 6, 1300, 6, DType::kF32, 2);
  p.has_d = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  using T4 = FwdTraits<float, float, 6, 512, 1, 128, 4, 1, ExpKind::kAccurate, 0, true, true, true,
                       true, true, true, true, true>;
  check_saving<T4, ScanAlgo::kBlockScan>(p, 4, 40);
  check_saving<T4, ScanAlgo::kBlockScan>(p, 9, 41);
  // 2 warps of 16 steps, bf16, constant C: checkpoints every 16 steps.
  FwdProblem q = testing::shape(1, 3, 200, 4, DType::kBF16, 1);
  q.variable_c = false;
  q.has_d = true;
  using T16 = FwdTraits<__nv_bfloat16, float, 4, 1024, 1, 64, 16, 1, ExpKind::kAccurate, 0, true,
                        false, true, false, false, false, true, false>;
  check_saving<T16, ScanAlgo::kBlockScan>(q, 4, 42);
}

}  // namespace
}  // namespace ssmtune
