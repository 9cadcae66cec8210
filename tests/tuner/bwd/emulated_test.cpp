// The backward kernels (sequential, multipass, warp scan, the warp scan's
// state sum) run on the host through
// tests/support/cuda_emulation.h (threads as CUDA threads, shared memory
// poisoned with NaN before each block) against the fp64 CPU reference: the
// kernels' indexing, staging, reverse walk, fixed-order reductions, segment
// combine and finalize, checked without a GPU. Accurate exp only (the fast
// one is inline PTX).
#include "support/cuda_emulation.h"
// clang-format off: the shim must come first
SSMTUNE_EMULATED_KERNELS_BEGIN
#include "ssm/bwd/bwd_all.cuh"
SSMTUNE_EMULATED_KERNELS_END
// clang-format on

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "support/host_tensors.h"
#include "support/problems.h"
#include "tuner/accuracy.h"
#include "tuner/bwd/accuracy.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/bwd/runner.h"
#include "tuner/fwd/reference_cpu.h"

namespace ssmtune_kernels {
float4 smem_raw[1 << 16];  // the kernels' extern __shared__ array: 1 MiB
}  // namespace ssmtune_kernels

namespace ssmtune::bwd {
namespace {

using ssmtune_kernels::BwdTraits;
using ssmtune_kernels::ExpKind;
using testing::HostTensors;
constexpr ExpKind kAcc = ExpKind::kAccurate;

template <typename Tr>
BwdConfig config_of(int segments) {
  BwdConfig c;
  if (Tr::kWarpScan) c.algo = BwdAlgo::kWarpScan;
  if (segments > 1) {
    c.algo = BwdAlgo::kMultiPass;
    c.segments = segments;
  }
  c.chunk = Tr::kChunk;
  c.d_step = Tr::kDStep;
  c.n_split = Tr::kNSplit;
  c.threads = Tr::kThreads;
  c.chan = Tr::kChan;
  c.acc = sizeof(typename Tr::AccT) == 8 ? BwdAcc::kF64 : BwdAcc::kF32;
  c.exp = BwdExp::kAccurate;
  return c;
}

// segments > 1: the multipass kernels over that many segments.
template <typename Tr>
void check_case(const BwdProblem& bp, uint64_t seed, int segments = 1) {
  const FwdProblem& p = bp.fwd;
  const BwdConfig c = config_of<Tr>(segments);
  INFO(bp.key() << " " << c.key() << " seed " << seed);
  // The traits must be the ones the plan names.
  auto plan = plan_bwd(bp, c);
  REQUIRE(plan.is_ok());
  const std::string traits = traits_expression(bp, c);
  const FwdHostInputs in = make_inputs(p, seed);
  const auto dout = make_dout(p, seed);
  const auto dlast = bp.has_dlast ? make_dlast(p, seed) : std::vector<double>{};
  const BwdHostGrads ref = reference_backward_cpu(in, dout, dlast);
  const FwdHostOutputs fwd = reference_fwd(in);

  HostTensors h;
  const DType io = p.dtype, f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen}, st = {p.batch, p.dim, p.dstate};
  BwdTensors t;
  testing::put_inputs(h, in, t);
  testing::put_bwd_outputs(h, bp, t);
  t.dout = h.put(dout, io, bdl);
  if (p.has_z) t.out = h.put(fwd.out, io, bdl);
  if (bp.has_dlast) t.dlast = h.put(dlast, f32, st);
  const Status valid = validate_bwd_tensors(bp, t);
  INFO(valid.to_string());
  REQUIRE(valid.is_ok());

  // NaN in every scratch word: a partial the kernels never wrote shows in the outputs.
  std::vector<unsigned char> scratch(static_cast<size_t>(plan->scratch.bytes), 0xFF);
  ssmtune_kernels::SsmBwdParams k = make_params(bp, t);
  char* base = reinterpret_cast<char*>(scratch.data());
  const auto& l = plan->scratch;
  k.ckpt = base + l.ckpt;
  k.carries = base + l.carries;
  k.part_b = reinterpret_cast<float*>(base + l.part_b);
  k.part_c = reinterpret_cast<float*>(base + l.part_c);
  k.part_a = reinterpret_cast<float*>(base + l.part_a);
  k.part_d = reinterpret_cast<float*>(base + l.part_d);
  k.part_bias = reinterpret_cast<float*>(base + l.part_bias);
  k.part_sb = base + l.part_sb;
  k.part_sa = base + l.part_sa;
  k.n_chunks = plan->n_chunks;
  k.tiles_per_group = plan->tiles_per_group;
  k.segments = plan->segments;
  k.seg_chunks = plan->seg_chunks;
  k.bias_slices = plan->bias_slices;
  REQUIRE(plan->max_shared_bytes <= sizeof ssmtune_kernels::smem_raw);
  auto poison_smem = [] {
    std::memset(ssmtune_kernels::smem_raw, 0xFF, sizeof ssmtune_kernels::smem_raw);
  };
  auto run_all = [&] {
    for (const auto& launch : plan->launches) {
      const std::string& name = plan->kernels[launch.kernel].name_expression;
      auto is = [&name](const char* kernel) {
        return name.rfind(std::string("ssmtune_kernels::") + kernel + "<", 0) == 0;
      };
      const jit::Dim3 g = launch.grid;
      // Each traits type instantiates only the kernels its plans name. (The
      // branches if constexpr discards are empty alike, which clang-tidy
      // takes for repeated branches.)
      // NOLINTBEGIN(bugprone-branch-clone)
      if (is("ssm_bwd_finalize")) {  // shuffles: threads as threads
        emulation::launch(std::min(g.x, 16u), g.y, g.z, launch.block.x,
                          [&k] { ssmtune_kernels::ssm_bwd_finalize<Tr>(k); });
      } else if (is("ssm_bwd_state_sum")) {  // shuffles: threads as threads
        emulation::launch(g.x, g.y, g.z, launch.block.x,
                          [&k] { ssmtune_kernels::ssm_bwd_state_sum<Tr>(k); });
      } else if constexpr (Tr::kWarpScan) {
        REQUIRE(is("ssm_bwd_warpscan"));
        emulation::launch(
            g.x, g.y, g.z, launch.block.x, [&k] { ssmtune_kernels::ssm_bwd_warpscan<Tr>(k); },
            poison_smem);
      } else if constexpr (Tr::kChan > 1) {  // the sequential kernel only
        REQUIRE(is("ssm_bwd_sequential"));
        emulation::launch(
            g.x, g.y, g.z, launch.block.x, [&k] { ssmtune_kernels::ssm_bwd_sequential<Tr>(k); },
            poison_smem);
      } else if (is("ssm_bwd_sequential")) {
        emulation::launch(
            g.x, g.y, g.z, launch.block.x, [&k] { ssmtune_kernels::ssm_bwd_sequential<Tr>(k); },
            poison_smem);
      } else if (is("ssm_bwd_multipass_local")) {
        emulation::launch(
            g.x, g.y, g.z, launch.block.x,
            [&k] { ssmtune_kernels::ssm_bwd_multipass_local<Tr>(k); }, poison_smem);
      } else if (is("ssm_bwd_multipass_combine")) {
        emulation::launch_serial(g.x, g.y, g.z, launch.block.x,
                                 [&k] { ssmtune_kernels::ssm_bwd_multipass_combine<Tr>(k); });
      } else {
        REQUIRE(is("ssm_bwd_multipass_chunks"));
        emulation::launch(
            g.x, g.y, g.z, launch.block.x,
            [&k] { ssmtune_kernels::ssm_bwd_multipass_chunks<Tr>(k); }, poison_smem);
      }
      // NOLINTEND(bugprone-branch-clone)
    }
  };
  run_all();

  struct Grad {
    const char* name;
    const std::vector<double>* want;
    const TensorArg* got;
  };
  const Grad grads[] = {{"du", &ref.du, &t.du},   {"ddelta", &ref.ddelta, &t.ddelta},
                        {"dA", &ref.dA, &t.dA},   {"dB", &ref.dB, &t.dB},
                        {"dC", &ref.dC, &t.dC},   {"dD", &ref.dD, &t.dD},
                        {"dz", &ref.dz, &t.dz},   {"ddelta_bias", &ref.ddelta_bias, &t.ddelta_bias},
                        {"dh0", &ref.dh0, &t.dh0}};
  std::string line;
  for (const Grad& g : grads) {
    if (g.want->empty()) {
      CHECK(!g.got->present());
      continue;
    }
    const ErrorStats s = score(*g.want, g.got->data, g.got->dtype, 0, 0);
    const double budget = bwd_budget_for(g.name, p.dtype, c.acc == BwdAcc::kF64,
                                         rounding_floor(*g.want, g.got->dtype))
                              .rel_l2;
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.1e", g.name, s.rel_l2);
    line += buf;
    INFO(g.name << " rel_l2 " << s.rel_l2 << " budget " << budget << " unwritten " << s.unwritten);
    CHECK(s.unwritten == 0);
    CHECK(s.rel_l2 <= budget);
  }
  std::printf("%-48s %s%s\n", bp.key().c_str(), c.key().c_str(), line.c_str());

  // Again from the checkpoints the first run left (phase 1 skipped, as
  // when the forward saved them): the same bits.
  std::vector<std::vector<unsigned char>> first = h.keep;
  for (const Grad& g : grads)
    if (g.got->present()) {
      for (auto& bytes : h.keep)
        if (bytes.data() == g.got->data) std::fill(bytes.begin(), bytes.end(), 0xEE);
    }
  k.ckpt_ready = 1;
  run_all();
  CHECK(h.keep == first);
}

BwdProblem make(int64_t b, int64_t d, int64_t l, int64_t n, int64_t g, DType t) {
  BwdProblem p;
  p.fwd = testing::shape(b, d, l, n, t, g);
  return p;
}

BwdProblem all_flags(BwdProblem p) {
  p.fwd.has_d = p.fwd.has_z = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
  p.fwd.return_last_state = p.fwd.has_initial_state = p.has_dlast = true;
  return p;
}

TEST_CASE("emulated backward kernels match the fp64 reference", "[bwd][emulated]") {
  // Two groups of 12 channels (a partial tile each), 5 chunks (the last
  // partial), every flag; then none; then bf16.
  check_case<
      BwdTraits<float, float, 16, 8, 8, 4, kAcc, true, true, true, true, true, true, true, true>>(
      all_flags(make(2, 24, 37, 16, 2, DType::kF32)), 11);
  check_case<BwdTraits<float, float, 16, 8, 8, 4, kAcc, true, true, false, false, false, false,
                       false, false>>(make(2, 24, 37, 16, 2, DType::kF32), 12);
  check_case<BwdTraits<__nv_bfloat16, float, 16, 8, 8, 4, kAcc, true, true, true, true, true, true,
                       true, true>>(all_flags(make(2, 24, 37, 16, 2, DType::kBF16)), 13);
  {  // constant B and C, dstate 5, n_split 1, 32 channels (a partial tile)
    BwdProblem p = all_flags(make(2, 40, 21, 5, 1, DType::kF32));
    p.fwd.variable_b = p.fwd.variable_c = false;
    check_case<BwdTraits<float, float, 5, 8, 32, 1, kAcc, false, false, true, true, true, true,
                         true, true>>(p, 14);
  }
  {  // seqlen 1, fp16, constant C, fp64 accumulation
    BwdProblem p = all_flags(make(3, 8, 1, 4, 1, DType::kF16));
    p.fwd.variable_c = false;
    check_case<BwdTraits<__half, double, 4, 4, 8, 4, kAcc, true, false, true, true, true, true,
                         true, true>>(p, 15);
  }
  {  // dstate 6 over 2 lanes, chunk 12, constant B, D, bias, h0 (no dlast)
    BwdProblem p = make(2, 20, 50, 6, 1, DType::kF32);
    p.fwd.variable_b = false;
    p.fwd.has_d = p.fwd.has_delta_bias = p.fwd.has_initial_state = true;
    check_case<BwdTraits<float, double, 6, 12, 16, 2, kAcc, false, true, true, false, true, false,
                         true, false>>(p, 16);
  }
  {  // four warps, bf16, chunk 16, a partial tile, every flag
    BwdProblem p = all_flags(make(2, 40, 50, 16, 1, DType::kBF16));
    check_case<BwdTraits<__nv_bfloat16, float, 16, 16, 32, 4, kAcc, true, true, true, true, true,
                         true, true, true>>(p, 18);
  }
  {  // dstate 64 over 16 lanes, three tiles of 2 channels, constant C
    BwdProblem p = make(2, 6, 20, 64, 1, DType::kF32);
    p.fwd.variable_c = false;
    p.fwd.return_last_state = p.has_dlast = true;
    check_case<BwdTraits<float, float, 64, 8, 2, 16, kAcc, true, false, false, false, false, false,
                         false, true>>(p, 19);
  }
  {  // dstate 64 over 8 lanes (8 states a thread: staged chunk by chunk, no read-ahead),
     // bf16, 3 chunks (the last partial), every flag
    BwdProblem p = all_flags(make(1, 8, 21, 64, 1, DType::kBF16));
    check_case<BwdTraits<__nv_bfloat16, float, 64, 8, 4, 8, kAcc, true, true, true, true, true,
                         true, true, true>>(p, 20);
  }
  {  // multipass: 5 chunks over 3 segments (the last shorter), every flag
    check_case<
        BwdTraits<float, float, 16, 8, 8, 4, kAcc, true, true, true, true, true, true, true, true>>(
        all_flags(make(2, 24, 37, 16, 2, DType::kF32)), 21, 3);
    // 13 chunks over 4 segments of 4, bf16, constant B
    BwdProblem p = all_flags(make(1, 40, 50, 16, 1, DType::kBF16));
    p.fwd.variable_b = false;
    check_case<BwdTraits<__nv_bfloat16, float, 16, 4, 32, 4, kAcc, false, true, true, true, true,
                         true, true, true>>(p, 22, 4);
    // without h0 or dlast, fp64, constant C
    BwdProblem q = make(2, 8, 30, 4, 1, DType::kF32);
    q.fwd.variable_c = false;
    q.fwd.has_d = true;
    check_case<BwdTraits<float, double, 4, 4, 8, 4, kAcc, true, false, true, false, false, false,
                         false, false>>(q, 23, 8);
  }
  {  // dstate 32 over 8 lanes of 4 states, 32 channels a block (256 threads):
     // the default's layout there; fp16, a partial tile, 3 chunks (the last
     // partial), every flag
    BwdProblem p = all_flags(make(1, 40, 37, 32, 1, DType::kF16));
    check_case<BwdTraits<__half, float, 32, 16, 32, 8, kAcc, true, true, true, true, true, true,
                         true, true>>(p, 24);
    // bf16 over two groups of 36 channels (a partial tile each), constant B,
    // no flags, 2 chunks (the last partial)
    BwdProblem q = make(1, 72, 21, 32, 2, DType::kBF16);
    q.fwd.variable_b = false;
    check_case<BwdTraits<__nv_bfloat16, float, 32, 16, 32, 8, kAcc, false, true, false, false,
                         false, false, false, false>>(q, 25);
  }
  {  // dstate 20 over 8 lanes of 3 states (4 slots past dstate), 32 channels a
     // block: the default's layout at dstate 17 to 31; bf16, a partial tile,
     // 3 chunks (the last partial), every flag
    BwdProblem p = all_flags(make(1, 40, 37, 20, 1, DType::kBF16));
    check_case<BwdTraits<__nv_bfloat16, float, 20, 16, 32, 8, kAcc, true, true, true, true, true,
                         true, true, true>>(p, 26);
    // dstate 27 (4 states a thread, 5 past dstate), fp32, constant C, two
    // groups of 36 channels, no flags
    BwdProblem q = make(1, 72, 21, 27, 2, DType::kF32);
    q.fwd.variable_c = false;
    check_case<BwdTraits<float, float, 27, 16, 32, 8, kAcc, true, false, false, false, false, false,
                         false, false>>(q, 27);
  }
  {  // dstate 5 over 4 lanes (states past dstate), two warps, seqlen 7
    BwdProblem p = all_flags(make(1, 16, 7, 5, 2, DType::kF32));
    check_case<
        BwdTraits<float, float, 5, 4, 16, 4, kAcc, true, true, true, true, true, true, true, true>>(
        p, 17);
  }
}

// The chunked kernels with their lanes' state slots permuted (16-bit rows,
// up to 4 states a thread, fewer than 4 blocks of 128 threads an SM: the
// config's .b<blocks>), so the dB/dC reduce-scatter's first levels run
// without selects (templates/ssm/bwd/bwd_chunk.cuh, StateSlots).
template <typename InT, int kN, int kChunk, int kDStep, int kNSplit, bool kVarB, bool kVarC,
          bool kFlags, int kBlocks, int kChan = 1>
using SlotTraits = BwdTraits<InT, float, kN, kChunk, kDStep, kNSplit, kAcc, kVarB, kVarC, kFlags,
                             kFlags, kFlags, kFlags, kFlags, kFlags, kBlocks, 0, kChan>;

template <typename Tr>
void check_permuted(const BwdProblem& bp, uint64_t seed, int segments = 1) {
  static_assert(ssmtune_kernels::StateSlots<Tr>::kFree > 0, "the slots must be permuted");
  check_case<Tr>(bp, seed, segments);
}

TEST_CASE("emulated backward with permuted state slots matches the fp64 reference",
          "[bwd][emulated]") {
  // dstate 16 over 4 lanes, 32 channels a block at 3 blocks an SM (the
  // default's layout under one wave), bf16, a partial tile, 4 chunks (the
  // last partial), every flag.
  check_permuted<SlotTraits<__nv_bfloat16, 16, 16, 32, 4, true, true, true, 3>>(
      all_flags(make(2, 40, 50, 16, 1, DType::kBF16)), 61);
  {  // fp16, variable C only, no flags, two groups of 36 channels
    BwdProblem p = make(1, 72, 37, 16, 2, DType::kF16);
    p.fwd.variable_b = false;
    check_permuted<SlotTraits<__half, 16, 16, 32, 4, false, true, false, 3>>(p, 62);
  }
  // dstate 8: 2 states a thread, one level without selects; fp16, every flag.
  check_permuted<SlotTraits<__half, 8, 32, 32, 4, true, true, true, 3>>(
      all_flags(make(2, 24, 70, 8, 1, DType::kF16)), 63);
  // dstate 14 (slots past dstate), 2 channels a thread, 64 threads at 2 blocks.
  check_permuted<SlotTraits<__nv_bfloat16, 14, 8, 32, 4, true, true, true, 2, 2>>(
      all_flags(make(1, 40, 21, 14, 1, DType::kBF16)), 64);
  // multipass: 13 chunks over 4 segments, variable B only.
  {
    BwdProblem p = all_flags(make(1, 40, 50, 16, 1, DType::kBF16));
    p.fwd.variable_c = false;
    check_permuted<SlotTraits<__nv_bfloat16, 16, 4, 32, 4, true, false, true, 3>>(p, 65, 4);
  }
}

// The sequential kernel with kChan channels a thread (the config's .c<chan>).
template <typename InT, typename AccT, int kN, int kChunk, int kDStep, int kNSplit, bool kVarB,
          bool kVarC, bool kFlags, int kChan>
using ChanTraits = BwdTraits<InT, AccT, kN, kChunk, kDStep, kNSplit, kAcc, kVarB, kVarC, kFlags,
                             kFlags, kFlags, kFlags, kFlags, kFlags, 0, 0, kChan>;

TEST_CASE("emulated backward with several channels a thread matches the fp64 reference",
          "[bwd][emulated]") {
  // 2 channels a thread (c and c + 8 of a tile of 16): two groups of 12
  // channels (each tile's upper channels partly past its end), 5 chunks (the
  // last partial), every flag.
  check_case<ChanTraits<float, float, 16, 8, 16, 4, true, true, true, 2>>(
      all_flags(make(2, 24, 37, 16, 2, DType::kF32)), 51);
  // bf16, 64 threads (two warps), 40 channels: the second tile's upper
  // channels all past its end.
  check_case<ChanTraits<__nv_bfloat16, float, 16, 16, 32, 4, true, true, true, 2>>(
      all_flags(make(2, 40, 50, 16, 1, DType::kBF16)), 52);
  {  // constant B and C, 3 states a thread over 2 lanes, fp64, no flags
    BwdProblem p = make(2, 20, 30, 6, 1, DType::kF32);
    p.fwd.variable_b = p.fwd.variable_c = false;
    check_case<ChanTraits<float, double, 6, 12, 32, 2, false, false, false, 2>>(p, 53);
  }
  {  // dstate 5 over 4 lanes (states past dstate), fp16, constant C, seqlen 7
    BwdProblem p = all_flags(make(1, 16, 7, 5, 1, DType::kF16));
    p.fwd.variable_c = false;
    check_case<ChanTraits<__half, float, 5, 4, 16, 4, true, false, true, 2>>(p, 54);
  }
  // 4 channels a thread (16 chains: staged chunk by chunk), 3 chunks.
  check_case<ChanTraits<float, float, 16, 8, 32, 4, true, true, true, 4>>(
      all_flags(make(1, 32, 21, 16, 1, DType::kF32)), 55);
}

// The warp scan: kWarps warps per channel, 32 lanes x kWarps x items a
// chunk (one warp, 4 items: 128; 8 items: 256); a channel's states over
// kGroups blocks.
template <typename InT, typename AccT, int kN, int kChunk, int kDStep, bool kVarB, bool kVarC,
          bool kFlags, int kWarps = 1, int kGroups = 1>
using ScanTraits = BwdTraits<InT, AccT, kN, kChunk, kDStep, kGroups, kAcc, kVarB, kVarC, kFlags,
                             kFlags, kFlags, kFlags, kFlags, kFlags, 0, kChunk / (32 * kWarps)>;

TEST_CASE("emulated warp-scan backward matches the fp64 reference", "[bwd][emulated]") {
  // Two groups of 3 channels (a partial tile of 2 each), 3 chunks (the last
  // partial), every flag.
  check_case<ScanTraits<float, float, 8, 128, 2, true, true, true>>(
      all_flags(make(1, 6, 300, 8, 2, DType::kF32)), 31);
  {  // bf16, constant B, dstate 5, seqlen 7 (one partial chunk), every flag
    BwdProblem p = all_flags(make(2, 3, 7, 5, 1, DType::kBF16));
    p.fwd.variable_b = false;
    check_case<ScanTraits<__nv_bfloat16, float, 5, 128, 2, false, true, true>>(p, 32);
  }
  {  // fp16, fp64 accumulation, constant C, chunk 256 (two chunks), no flags
    BwdProblem p = make(1, 3, 300, 4, 1, DType::kF16);
    p.fwd.variable_c = false;
    check_case<ScanTraits<__half, double, 4, 256, 2, true, false, false>>(p, 33);
  }
  {  // constant B and C, dstate 40 (states past one lane's stride), every flag
    BwdProblem p = all_flags(make(1, 1, 140, 40, 1, DType::kF32));
    p.fwd.variable_b = p.fwd.variable_c = false;
    check_case<ScanTraits<float, float, 40, 128, 1, false, false, true>>(p, 34);
  }
  // The default at dstate <= 3 over many channels (8 channels a block,
  // chunks of 128): dstate 1 over 20 channels (a partial tile), 3 chunks,
  // every flag; dstate 3 in fp16 over two groups of 6.
  check_case<ScanTraits<float, float, 1, 128, 8, true, true, true>>(
      all_flags(make(2, 20, 300, 1, 1, DType::kF32)), 35);
  check_case<ScanTraits<__half, float, 3, 128, 8, true, true, true>>(
      all_flags(make(1, 12, 130, 3, 2, DType::kF16)), 36);
}

TEST_CASE("emulated warp-scan backward with several warps a channel matches the fp64 reference",
          "[bwd][emulated]") {
  // 2 warps on each of 2 channels: two groups of 3 (a partial tile each),
  // chunk 256, 3 chunks (the last partial), every flag.
  check_case<ScanTraits<float, float, 8, 256, 2, true, true, true, 2>>(
      all_flags(make(1, 6, 700, 8, 2, DType::kF32)), 41);
  {  // 4 warps on one channel, bf16, constant B, odd dstate, 3 chunks of 512
    BwdProblem p = all_flags(make(2, 2, 1300, 5, 1, DType::kBF16));
    p.fwd.variable_b = false;
    check_case<ScanTraits<__nv_bfloat16, float, 5, 512, 1, false, true, true, 4>>(p, 42);
  }
  // 8 warps, chunk 1024, a sequence inside the first warps' lanes: the rest
  // scan identity maps.
  check_case<ScanTraits<float, float, 4, 1024, 1, true, true, true, 8>>(
      all_flags(make(1, 3, 100, 4, 1, DType::kF32)), 43);
  {  // fp16, fp64 accumulation, constant C, 2 warps of 8 items (chunk 512), no flags
    BwdProblem p = make(1, 3, 1100, 4, 1, DType::kF16);
    p.fwd.variable_c = false;
    check_case<ScanTraits<__half, double, 4, 512, 2, true, false, false, 2>>(p, 44);
  }
}

TEST_CASE(
    "emulated warp-scan backward with its states over several blocks matches the fp64 "
    "reference",
    "[bwd][emulated]") {
  // 8 states over 4 blocks, 4 warps on one channel, 3 chunks of 512 (the
  // last partial), every flag, fp32.
  check_case<ScanTraits<float, float, 8, 512, 1, true, true, true, 4, 4>>(
      all_flags(make(2, 2, 1300, 8, 1, DType::kF32)), 61);
  // dstate 5 over 4 blocks (the first group runs states 0 and 4, the
  // others one: rows past dstate), bf16, 2 warps, two groups of 3 channels
  // on tiles of 2 (a partial tile each), every flag.
  check_case<ScanTraits<__nv_bfloat16, float, 5, 256, 2, true, true, true, 2, 4>>(
      all_flags(make(1, 6, 700, 5, 2, DType::kBF16)), 62);
  {  // constant B, fp16, 2 groups of 8 states, one warp, no flags
    BwdProblem p = make(2, 3, 300, 16, 1, DType::kF16);
    p.fwd.variable_b = false;
    check_case<ScanTraits<__half, float, 16, 128, 1, false, true, false, 1, 2>>(p, 63);
  }
  {  // fp64 accumulation, constant C, 8 groups of one state, 2 warps, D and delta_bias
    BwdProblem p = make(1, 3, 600, 8, 1, DType::kF32);
    p.fwd.variable_c = false;
    p.fwd.has_d = p.fwd.has_delta_bias = p.fwd.delta_softplus = true;
    check_case<BwdTraits<float, double, 8, 256, 1, 8, kAcc, true, false, true, false, true, true,
                         false, false, 0, 4>>(p, 64);
  }
}

}  // namespace
}  // namespace ssmtune::bwd
