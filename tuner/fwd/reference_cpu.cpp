// The reference recurrence, one (batch, dim) row at a time; the
// transcendental functions follow mamba_ssm's formulas (softplus cut at 20).
#include "tuner/fwd/reference_cpu.h"

#include <algorithm>
#include <cmath>
#include <future>

#include "core/thread_pool.h"

namespace ssmtune {
namespace {

void reference_row(const FwdHostInputs& in, FwdHostOutputs& out, int64_t b, int64_t d,
                   std::vector<double>& h) {
  const FwdProblem& p = in.problem;
  const int64_t L = p.seqlen, N = p.dstate;
  const int64_t g = d / p.dim_per_group();
  const int64_t row = (b * p.dim + d) * L;
  const int64_t state = (b * p.dim + d) * N;
  // Variable B/C: element (b, g, n, t); constant: (d, n) for every t.
  const int64_t bc_base = (b * p.groups + g) * N * L;

  for (int64_t n = 0; n < N; ++n) h[n] = p.has_initial_state ? in.h0[state + n] : 0.0;
  for (int64_t t = 0; t < L; ++t) {
    double dt = in.delta[row + t];
    if (p.has_delta_bias) dt += in.delta_bias[d];
    if (p.delta_softplus) dt = dt <= 20.0 ? std::log1p(std::exp(dt)) : dt;
    const double u = in.u[row + t];
    double y = 0.0;
    for (int64_t n = 0; n < N; ++n) {
      const double Bv = p.variable_b ? in.B[bc_base + n * L + t] : in.B[d * N + n];
      const double Cv = p.variable_c ? in.C[bc_base + n * L + t] : in.C[d * N + n];
      h[n] = std::exp(dt * in.A[d * N + n]) * h[n] + dt * Bv * u;
      y += Cv * h[n];
    }
    if (p.has_d) y += in.D[d] * u;
    out.out[row + t] = y;
    if (p.has_z) {
      const double z = in.z[row + t];
      out.out_z[row + t] = y * z / (1.0 + std::exp(-z));
    }
  }
  if (p.return_last_state)
    for (int64_t n = 0; n < N; ++n) out.last_state[state + n] = h[n];
}

}  // namespace

FwdHostOutputs reference_fwd(const FwdHostInputs& in, unsigned threads) {
  const FwdProblem& p = in.problem;
  const int64_t rows = p.batch * p.dim;
  FwdHostOutputs out;
  out.out.resize(static_cast<size_t>(rows * p.seqlen));
  if (p.has_z) out.out_z.resize(out.out.size());
  if (p.return_last_state) out.last_state.resize(static_cast<size_t>(rows * p.dstate));

  auto run_rows = [&](int64_t begin, int64_t end) {
    std::vector<double> h(static_cast<size_t>(p.dstate));
    for (int64_t r = begin; r < end; ++r) reference_row(in, out, r / p.dim, r % p.dim, h);
  };
  // Rows write disjoint outputs, so any split gives the same bits.
  const double work = static_cast<double>(rows) * p.seqlen * p.dstate;
  if (threads == 1 || rows == 1 || work < 1e5) {
    run_rows(0, rows);
    return out;
  }
  ThreadPool pool(threads);
  const int64_t tasks = std::min<int64_t>(rows, 8 * static_cast<int64_t>(pool.size()));
  std::vector<std::future<void>> done;
  for (int64_t i = 0; i < tasks; ++i)
    done.push_back(pool.submit([&, i] { run_rows(rows * i / tasks, rows * (i + 1) / tasks); }));
  for (auto& f : done) f.get();
  return out;
}

}  // namespace ssmtune
