// The backward as a reverse recurrence per (batch, channel, state) chain:
// one channel's forward states are kept (dstate x seqlen), then
// g_t = a_{t+1} g_{t+1} + C_t dy_t runs backwards. Work is cut into units
// of up to kSlice channels of one (batch, group), fixed by the problem
// alone; what crosses units (dB, dC across channels; dA, dD, ddelta_bias
// and constant dB/dC across batches) goes to per-unit or per-row partials
// that are reduced afterwards in a fixed order.
#include "tuner/bwd/reference_cpu.h"

#include <algorithm>
#include <cmath>
#include <future>

#include "core/thread_pool.h"

namespace ssmtune::bwd {
namespace {

// Channels per unit: the variable dB/dC partials take (batch x dim x dstate x
// seqlen) / kSlice doubles each, and there are still batch x dim / kSlice units
// to spread over threads.
constexpr int64_t kSlice = 16;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Sums that cross units, before their reduction.
struct Partials {
  std::vector<double> dB, dC;        // variable: (unit, dstate, seqlen)
  std::vector<double> dA, dBc, dCc;  // (batch, dim, dstate); dBc/dCc when constant
  std::vector<double> dD, dbias;     // (batch, dim)
};

// Per-task buffers: one channel's states and per-timestep rows.
struct Buffers {
  std::vector<double> hs, dt, dy, ddt, y;
  explicit Buffers(const FwdProblem& p)
      : hs(static_cast<size_t>(p.dstate * p.seqlen)),
        dt(static_cast<size_t>(p.seqlen)),
        dy(dt.size()),
        ddt(dt.size()),
        y(dt.size()) {}
};

struct Ctx {
  const FwdHostInputs& in;
  const std::vector<double>& dout;
  const std::vector<double>& dlast;
  BwdHostGrads& out;
  Partials& part;
  int64_t slices;  // units per (batch, group)
};

// Every gradient of channel d of batch b; variable dB/dC go into the unit's
// partials part_b/part_c (dstate x seqlen), added to what earlier channels
// of the unit left there.
void channel(const Ctx& c, int64_t b, int64_t d, double* part_b, double* part_c, Buffers& w) {
  const FwdHostInputs& in = c.in;
  const FwdProblem& p = in.problem;
  const int64_t L = p.seqlen, N = p.dstate;
  const int64_t g = d / p.dim_per_group();
  const int64_t row = (b * p.dim + d) * L;
  const int64_t st = (b * p.dim + d) * N;
  const int64_t bc = (b * p.groups + g) * N * L;
  const double bias = p.has_delta_bias ? in.delta_bias[d] : 0.0;
  const double Dv = p.has_d ? in.D[d] : 0.0;
  auto Bat = [&](int64_t n, int64_t t) {
    return p.variable_b ? in.B[bc + n * L + t] : in.B[d * N + n];
  };
  auto Cat = [&](int64_t n, int64_t t) {
    return p.variable_c ? in.C[bc + n * L + t] : in.C[d * N + n];
  };

  for (int64_t t = 0; t < L; ++t) {
    const double x = in.delta[row + t] + bias;
    w.dt[t] = p.delta_softplus && x <= 20.0 ? std::log1p(std::exp(x)) : x;
    if (p.has_z) {
      const double z = in.z[row + t];
      w.dy[t] = c.dout[row + t] * z * sigmoid(z);
      w.y[t] = Dv * in.u[row + t];
    } else {
      w.dy[t] = c.dout[row + t];
    }
  }
  // Forward: the states, and y where dz needs it.
  for (int64_t n = 0; n < N; ++n) {
    const double A = in.A[d * N + n];
    double h = p.has_initial_state ? in.h0[st + n] : 0.0;
    for (int64_t t = 0; t < L; ++t) {
      h = std::exp(w.dt[t] * A) * h + w.dt[t] * Bat(n, t) * in.u[row + t];
      w.hs[n * L + t] = h;
      if (p.has_z) w.y[t] += Cat(n, t) * h;
    }
  }
  if (p.has_z) {
    for (int64_t t = 0; t < L; ++t) {
      const double z = in.z[row + t], s = sigmoid(z);
      c.out.dz[row + t] = c.dout[row + t] * w.y[t] * s * (1.0 + z * (1.0 - s));
    }
  }
  // Reverse: g_t = dL/dh_t, state by state.
  for (int64_t t = 0; t < L; ++t) {
    c.out.du[row + t] = Dv * w.dy[t];
    w.ddt[t] = 0.0;
  }
  for (int64_t n = 0; n < N; ++n) {
    const double A = in.A[d * N + n];
    const double h0 = p.has_initial_state ? in.h0[st + n] : 0.0;
    double carry = c.dlast.empty() ? 0.0 : c.dlast[st + n];  // a_{t+1} g_{t+1}
    double dA = 0, dBc = 0, dCc = 0;
    for (int64_t t = L - 1; t >= 0; --t) {
      const double dt = w.dt[t], u = in.u[row + t], Bv = Bat(n, t);
      const double gt = carry + Cat(n, t) * w.dy[t];
      const double hprev = t > 0 ? w.hs[n * L + t - 1] : h0;
      const double a = std::exp(dt * A);
      c.out.du[row + t] += gt * dt * Bv;
      w.ddt[t] += gt * (Bv * u + A * a * hprev);
      dA += gt * dt * a * hprev;
      const double db = gt * dt * u, dc = w.dy[t] * w.hs[n * L + t];
      if (p.variable_b)
        part_b[n * L + t] += db;
      else
        dBc += db;
      if (p.variable_c)
        part_c[n * L + t] += dc;
      else
        dCc += dc;
      carry = a * gt;
    }
    if (p.has_initial_state) c.out.dh0[st + n] = carry;
    c.part.dA[st + n] = dA;
    if (!p.variable_b) c.part.dBc[st + n] = dBc;
    if (!p.variable_c) c.part.dCc[st + n] = dCc;
  }
  double dD = 0, dbias = 0;
  for (int64_t t = 0; t < L; ++t) {
    const double x = in.delta[row + t] + bias;
    const double dd = p.delta_softplus && x <= 20.0 ? w.ddt[t] * sigmoid(x) : w.ddt[t];
    c.out.ddelta[row + t] = dd;
    dbias += dd;
    dD += w.dy[t] * in.u[row + t];
  }
  c.part.dD[b * p.dim + d] = dD;
  c.part.dbias[b * p.dim + d] = dbias;
}

void run_unit(const Ctx& c, int64_t unit, Buffers& w) {
  const FwdProblem& p = c.in.problem;
  const int64_t per_batch = p.groups * c.slices;
  const int64_t b = unit / per_batch, g = unit / c.slices % p.groups, s = unit % c.slices;
  const int64_t first = g * p.dim_per_group() + s * kSlice;
  const int64_t last = std::min(first + kSlice, (g + 1) * p.dim_per_group());
  const size_t block = static_cast<size_t>(unit * p.dstate * p.seqlen);
  double* part_b = p.variable_b ? c.part.dB.data() + block : nullptr;
  double* part_c = p.variable_c ? c.part.dC.data() + block : nullptr;
  for (int64_t d = first; d < last; ++d) channel(c, b, d, part_b, part_c, w);
}

}  // namespace

bool backward_sizes_match(const FwdHostInputs& in, const std::vector<double>& dout,
                          const std::vector<double>& dlast) {
  const FwdProblem& p = in.problem;
  if (!p.validate().is_ok()) return false;
  const size_t bdl = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t var = static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen);
  const size_t cst = static_cast<size_t>(p.dim * p.dstate);
  const size_t dim = static_cast<size_t>(p.dim);
  const size_t state = static_cast<size_t>(p.batch * p.dim * p.dstate);
  return dout.size() == bdl && (dlast.empty() || dlast.size() == state) && in.u.size() == bdl &&
         in.delta.size() == bdl && in.A.size() == cst &&
         in.B.size() == (p.variable_b ? var : cst) && in.C.size() == (p.variable_c ? var : cst) &&
         in.D.size() == (p.has_d ? dim : 0) && in.z.size() == (p.has_z ? bdl : 0) &&
         in.delta_bias.size() == (p.has_delta_bias ? dim : 0) &&
         in.h0.size() == (p.has_initial_state ? state : 0);
}

namespace {

// The fixed-order reductions of the partials into `out`.
void reduce(const FwdProblem& p, int64_t slices, const Partials& part, BwdHostGrads& out) {
  const int64_t Bt = p.batch, Dm = p.dim, N = p.dstate, L = p.seqlen, G = p.groups;
  auto over_batch = [&](const std::vector<double>& v, std::vector<double>& dst, int64_t inner) {
    dst.assign(static_cast<size_t>(Dm * inner), 0.0);
    for (int64_t b = 0; b < Bt; ++b)
      for (int64_t i = 0; i < Dm * inner; ++i) dst[i] += v[b * Dm * inner + i];
  };
  auto over_slices = [&](const std::vector<double>& v, std::vector<double>& dst) {
    const int64_t block = N * L;
    dst.assign(static_cast<size_t>(Bt * G * block), 0.0);
    for (int64_t bg = 0; bg < Bt * G; ++bg)
      for (int64_t s = 0; s < slices; ++s)
        for (int64_t i = 0; i < block; ++i) dst[bg * block + i] += v[(bg * slices + s) * block + i];
  };
  over_batch(part.dA, out.dA, N);
  if (p.variable_b)
    over_slices(part.dB, out.dB);
  else
    over_batch(part.dBc, out.dB, N);
  if (p.variable_c)
    over_slices(part.dC, out.dC);
  else
    over_batch(part.dCc, out.dC, N);
  if (p.has_d) over_batch(part.dD, out.dD, 1);
  if (p.has_delta_bias) over_batch(part.dbias, out.ddelta_bias, 1);
}

}  // namespace

BwdHostGrads reference_backward_cpu(const FwdHostInputs& in, const std::vector<double>& dout,
                                    const std::vector<double>& dlast, unsigned threads) {
  BwdHostGrads out;
  if (!backward_sizes_match(in, dout, dlast)) return out;
  const FwdProblem& p = in.problem;
  const size_t bdl = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t state = static_cast<size_t>(p.batch * p.dim * p.dstate);
  const size_t rows = static_cast<size_t>(p.batch * p.dim);
  out.du.resize(bdl);
  out.ddelta.resize(bdl);
  if (p.has_z) out.dz.resize(bdl);
  if (p.has_initial_state) out.dh0.resize(state);

  const int64_t slices = (p.dim_per_group() + kSlice - 1) / kSlice;
  const int64_t units = p.batch * p.groups * slices;
  const size_t unit_block = static_cast<size_t>(units * p.dstate * p.seqlen);
  Partials part;
  if (p.variable_b) part.dB.assign(unit_block, 0.0);
  if (p.variable_c) part.dC.assign(unit_block, 0.0);
  part.dA.resize(state);
  if (!p.variable_b) part.dBc.resize(state);
  if (!p.variable_c) part.dCc.resize(state);
  part.dD.resize(rows);
  part.dbias.resize(rows);
  const Ctx ctx{in, dout, dlast, out, part, slices};

  // Units write disjoint elements, so any split over threads gives the same bits.
  auto run_units = [&](int64_t begin, int64_t end) {
    Buffers w(p);
    for (int64_t u = begin; u < end; ++u) run_unit(ctx, u, w);
  };
  const double work = static_cast<double>(rows) * p.seqlen * p.dstate;
  if (threads == 1 || units == 1 || work < 1e5) {
    run_units(0, units);
  } else {
    ThreadPool pool(threads);
    const int64_t tasks = std::min<int64_t>(units, 4 * static_cast<int64_t>(pool.size()));
    std::vector<std::future<void>> done;
    for (int64_t i = 0; i < tasks; ++i)
      done.push_back(
          pool.submit([&, i] { run_units(units * i / tasks, units * (i + 1) / tasks); }));
    for (auto& f : done) f.get();
  }
  reduce(p, slices, part, out);
  return out;
}

}  // namespace ssmtune::bwd
