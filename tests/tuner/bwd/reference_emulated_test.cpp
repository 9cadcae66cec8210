// The fp64 GPU backward reference's kernels, run on the host, against the
// CPU reference over every flag combination, with units of one and of
// several channels: their indexing, interleaved scratch and fixed-order
// reductions, checked without a GPU. The params are set up here as
// tuner/bwd/reference_gpu.cpp does.

// A minimal host shim (these kernels use no shared memory, barriers or
// shuffles): threads run one after another.
#include <cmath>
#include <functional>

namespace ssmtune::bwd_ref_emulation {
struct Index3 {
  unsigned x = 0, y = 0, z = 0;
};
inline Index3 thread_index, block_index, block_dim;
inline void launch(unsigned blocks, unsigned threads, const std::function<void()>& body) {
  block_dim = {threads, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    block_index = {b, 0, 0};
    for (unsigned t = 0; t < threads; ++t) {
      thread_index = {t, 0, 0};
      body();
    }
  }
}
}  // namespace ssmtune::bwd_ref_emulation
// The CUDA keywords, for host code (they are reserved names).
// NOLINTBEGIN(bugprone-reserved-identifier)
#define __global__
#define __device__
#define __forceinline__ inline
// NOLINTEND(bugprone-reserved-identifier)
#define threadIdx (::ssmtune::bwd_ref_emulation::thread_index)
#define blockIdx (::ssmtune::bwd_ref_emulation::block_index)
#define blockDim (::ssmtune::bwd_ref_emulation::block_dim)
// clang-format off: the shim must come first
#include "ssm/bwd/bwd_reference.cuh"
// clang-format on

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "support/problems.h"
#include "tuner/bwd/host_grads.h"
#include "tuner/bwd/reference_cpu.h"
#include "tuner/bwd/reference_gpu.h"

namespace ssmtune::bwd {
namespace {

using ssmtune_kernels::BwdRefParams;

double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  if (num == 0) return 0;
  return den == 0 || !std::isfinite(num) ? INFINITY : std::sqrt(num / den);
}

// Runs both kernels on the host; scratch starts as NaN so that anything read
// before it is written shows.
BwdHostGrads run_emulated(const FwdHostInputs& in, const std::vector<double>& dout,
                          const std::vector<double>& dlast, int slice) {
  const FwdProblem& p = in.problem;
  const int slices = static_cast<int>((p.dim_per_group() + slice - 1) / slice);
  const long long units = p.batch * p.groups * slices;
  const size_t bdl = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t rows = static_cast<size_t>(p.batch * p.dim), state = rows * p.dstate;
  const size_t cst = static_cast<size_t>(p.dim * p.dstate);
  const size_t var = static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen);
  const size_t nl = static_cast<size_t>(units * p.dstate * p.seqlen);
  BwdHostGrads o;
  o.du.assign(bdl, NAN);
  o.ddelta.assign(bdl, NAN);
  if (p.has_z) o.dz.assign(bdl, NAN);
  if (p.has_initial_state) o.dh0.assign(state, NAN);
  o.dA.assign(cst, NAN);
  o.dB.assign(p.variable_b ? var : cst, NAN);
  o.dC.assign(p.variable_c ? var : cst, NAN);
  if (p.has_d) o.dD.assign(p.dim, NAN);
  if (p.has_delta_bias) o.ddelta_bias.assign(p.dim, NAN);
  std::vector<double> hs(nl, NAN), dts(units * p.seqlen, NAN), dys(units * p.seqlen, NAN);
  std::vector<double> pb(p.variable_b ? nl : 0, NAN), pc(p.variable_c ? nl : 0, NAN);
  std::vector<double> pa(state, NAN), pbc(p.variable_b ? 0 : state, NAN);
  std::vector<double> pcc(p.variable_c ? 0 : state, NAN), pd(rows, NAN), pbias(rows, NAN);
  auto ptr = [](std::vector<double>& v) { return v.empty() ? nullptr : v.data(); };
  auto cptr = [](const std::vector<double>& v) { return v.empty() ? nullptr : v.data(); };

  BwdRefParams r = reference_gpu_params(p, !dlast.empty(), slice);
  REQUIRE(r.slices == slices);  // the host side's count, worked out here again
  REQUIRE(r.units == units);
  r.u = cptr(in.u);
  r.delta = cptr(in.delta);
  r.A = cptr(in.A);
  r.B = cptr(in.B);
  r.C = cptr(in.C);
  r.D = cptr(in.D);
  r.z = cptr(in.z);
  r.delta_bias = cptr(in.delta_bias);
  r.h0 = cptr(in.h0);
  r.dout = cptr(dout);
  r.dlast = cptr(dlast);
  r.du = ptr(o.du);
  r.ddelta = ptr(o.ddelta);
  r.dz = ptr(o.dz);
  r.dh0 = ptr(o.dh0);
  r.dA = ptr(o.dA);
  r.dB = ptr(o.dB);
  r.dC = ptr(o.dC);
  r.dD = ptr(o.dD);
  r.ddelta_bias = ptr(o.ddelta_bias);
  r.hs = ptr(hs);
  r.dts = ptr(dts);
  r.dys = ptr(dys);
  r.part_b = ptr(pb);
  r.part_c = ptr(pc);
  r.part_a = ptr(pa);
  r.part_bc = ptr(pbc);
  r.part_cc = ptr(pcc);
  r.part_d = ptr(pd);
  r.part_bias = ptr(pbias);

  auto blocks = [](long long n, unsigned t) { return static_cast<unsigned>((n + t - 1) / t); };
  bwd_ref_emulation::launch(blocks(units, 32), 32,
                            [&] { ssmtune_kernels::ssm_bwd_reference_units(r); });
  auto reduce = [&](int what, size_t count) {
    r.what = what;
    bwd_ref_emulation::launch(blocks(static_cast<long long>(count), 128), 128,
                              [&] { ssmtune_kernels::ssm_bwd_reference_reduce(r); });
  };
  using namespace ssmtune_kernels;
  reduce(kBwdRefReduceA, cst);
  reduce(kBwdRefReduceB, p.variable_b ? var : cst);
  reduce(kBwdRefReduceC, p.variable_c ? var : cst);
  if (p.has_d) reduce(kBwdRefReduceD, p.dim);
  if (p.has_delta_bias) reduce(kBwdRefReduceBias, p.dim);
  return o;
}

TEST_CASE("GPU backward reference kernels, emulated, match the CPU reference", "[bwd][reference]") {
  int cases = 0;
  for (int m = 0; m < 256; ++m) {
    for (int64_t groups : {1, 2}) {
      FwdProblem p = testing::shape(2, 10, 7, 3, DType::kF32, groups);
      testing::set_flags(p, m);
      if (groups == 2 && !p.variable_b && !p.variable_c) continue;
      const uint64_t seed = 300 + cases++;
      const FwdHostInputs in = make_inputs(p, seed);
      const auto dout = make_dout(p, seed), dlast = make_dlast(p, seed);
      const BwdHostGrads want = reference_backward_cpu(in, dout, dlast, 1);
      // One channel per unit, and units of 3 (the last one short).
      for (int slice : {1, 3}) {
        const BwdHostGrads got = run_emulated(in, dout, dlast, slice);
        INFO(p.key() << " seed " << seed << " slice " << slice);
        CHECK(rel_l2(got.du, want.du) < 1e-14);
        CHECK(rel_l2(got.ddelta, want.ddelta) < 1e-14);
        CHECK(rel_l2(got.dz, want.dz) < 1e-14);
        CHECK(rel_l2(got.dh0, want.dh0) < 1e-14);
        CHECK(rel_l2(got.dA, want.dA) < 1e-14);
        CHECK(rel_l2(got.dB, want.dB) < 1e-14);
        CHECK(rel_l2(got.dC, want.dC) < 1e-14);
        CHECK(rel_l2(got.dD, want.dD) < 1e-14);
        CHECK(rel_l2(got.ddelta_bias, want.ddelta_bias) < 1e-14);
      }
    }
  }
}

}  // namespace
}  // namespace ssmtune::bwd
