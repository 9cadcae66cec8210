// Error statistics accumulated in fp64 over every element (poisoned and
// non-finite ones counted apart), and the budget and verdict rules.
#include "tuner/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/half.h"
#include "core/thread_pool.h"

#include "tuner/dtype.h"

namespace ssmtune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Accumulates the statistics one element at a time, over a slice of the
// elements; slices merge (sums, maxima and counts are associative).
class Scorer {
 public:
  Scorer(const std::vector<double>& ref, double max_ref, double rtol, double atol)
      : ref_(ref), rtol_(rtol), atol_(atol), max_ref_(max_ref) {}

  void unwritten() {
    ++s_.unwritten;
    ++s_.allclose_failures;
  }

  void value(size_t i, double got) {
    if (!std::isfinite(got)) {
      ++s_.nan_inf;
      ++s_.allclose_failures;
      return;
    }
    const double r = ref_[i];
    const double err = std::fabs(got - r);
    err2_ += err * err;
    ref2_ += r * r;
    s_.max_abs = std::max(s_.max_abs, err);
    if (std::fabs(r) > 1e-3 * max_ref_) s_.max_rel = std::max(s_.max_rel, err / std::fabs(r));
    if (!(err <= atol_ + rtol_ * std::fabs(r))) ++s_.allclose_failures;
  }

  void merge(const Scorer& o) {
    s_.unwritten += o.s_.unwritten;
    s_.nan_inf += o.s_.nan_inf;
    s_.allclose_failures += o.s_.allclose_failures;
    s_.max_abs = std::max(s_.max_abs, o.s_.max_abs);
    s_.max_rel = std::max(s_.max_rel, o.s_.max_rel);
    err2_ += o.err2_;
    ref2_ += o.ref2_;
  }

  ErrorStats finish(size_t count) {
    auto ratio = [](double num, double den) {
      return num == 0 ? 0.0 : den == 0 ? kInf : num / den;
    };
    s_.count = static_cast<int64_t>(count);
    s_.rel_l2 = s_.unwritten + s_.nan_inf > 0 ? kInf : ratio(std::sqrt(err2_), std::sqrt(ref2_));
    s_.max_abs_over_max_ref = ratio(s_.max_abs, max_ref_);
    return s_;
  }

 private:
  const std::vector<double>& ref_;
  double rtol_, atol_;
  double max_ref_ = 0, err2_ = 0, ref2_ = 0;
  ErrorStats s_;
};

// Runs fn(begin, end) over [0, n) in slices on a shared pool; large outputs
// (tens of millions of elements per config) are scored in parallel.
template <typename Fn>
void parallel_slices(size_t n, Fn fn) {
  constexpr size_t kMinSlice = size_t{1} << 20;
  static ThreadPool pool;
  const size_t slices = std::min<size_t>(pool.size(), (n + kMinSlice - 1) / kMinSlice);
  if (slices <= 1) {
    fn(0, n, 0);
    return;
  }
  std::vector<std::future<void>> done;
  for (size_t k = 0; k < slices; ++k)
    done.push_back(
        pool.submit([&fn, n, slices, k] { fn(n * k / slices, n * (k + 1) / slices, k); }));
  for (auto& f : done) f.get();
}

double decode_one(const unsigned char* p, DType dtype) {
  if (dtype == DType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return dtype == DType::kF16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
}

double max_abs_of(const std::vector<double>& v) {
  std::vector<double> part(64, 0.0);
  parallel_slices(v.size(), [&](size_t b, size_t e, size_t k) {
    double m = 0;
    for (size_t i = b; i < e; ++i) m = std::max(m, std::fabs(v[i]));
    part[k] = m;
  });
  return *std::max_element(part.begin(), part.end());
}

ErrorStats score_slices(const std::vector<double>& ref, double max_ref, size_t n, double rtol,
                        double atol, const std::function<void(Scorer&, size_t, size_t)>& body) {
  std::vector<Scorer> parts(64, Scorer(ref, max_ref, rtol, atol));
  parallel_slices(n, [&](size_t b, size_t e, size_t k) { body(parts[k], b, e); });
  for (size_t k = 1; k < parts.size(); ++k) parts[0].merge(parts[k]);
  return parts[0].finish(n);
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kAtLimit:
      return 0;
    case Verdict::kInside:
      return 1;
    case Verdict::kOutside:
      return 2;
    case Verdict::kDefect:
      return 3;
  }
  return 3;
}

}  // namespace

std::vector<unsigned char> poison_pattern(DType dtype) {
  const uint32_t bits = dtype == DType::kF32   ? kPoisonF32
                        : dtype == DType::kF16 ? kPoisonF16
                                               : kPoisonBF16;
  std::vector<unsigned char> out(static_cast<size_t>(dtype_bytes(dtype)));
  for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<unsigned char>(bits >> (8 * k));
  return out;
}

double max_abs(const std::vector<double>& v) { return max_abs_of(v); }

ErrorStats score(const std::vector<double>& ref, const void* raw, DType dtype, double rtol,
                 double atol) {
  return score(ref, max_abs_of(ref), raw, dtype, rtol, atol);
}

ErrorStats score(const std::vector<double>& ref, double max_abs_ref, const void* raw, DType dtype,
                 double rtol, double atol) {
  const auto* bytes = static_cast<const unsigned char*>(raw);
  const std::vector<unsigned char> poison = poison_pattern(dtype);
  const size_t es = poison.size();
  return score_slices(ref, max_abs_ref, ref.size(), rtol, atol, [&](Scorer& s, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      if (std::memcmp(bytes + i * es, poison.data(), es) == 0) {
        s.unwritten();
      } else {
        s.value(i, decode_one(bytes + i * es, dtype));
      }
    }
  });
}

ErrorStats score(const std::vector<double>& ref, const std::vector<double>& got, double rtol,
                 double atol) {
  const size_t n = std::min(ref.size(), got.size());
  return score_slices(ref, max_abs_of(ref), n, rtol, atol, [&](Scorer& s, size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) s.value(i, got[i]);
  });
}

Tolerance mamba_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return {6e-4, 2e-3};
    case DType::kF16:
      return {3e-3, 5e-3};
    case DType::kBF16:
      return {3e-2, 5e-2};
  }
  return {6e-4, 2e-3};
}

double rounding_floor(const std::vector<double>& ref, DType dtype) {
  double err2 = 0, ref2 = 0;
  for (double r : ref) {
    const double e = round_to(r, dtype) - r;
    err2 += e * e;
    ref2 += r * r;
  }
  return ref2 == 0 ? 0.0 : std::sqrt(err2 / ref2);
}

ErrorBudget budget_for(DType /*input*/, bool acc_is_fp64, double floor) {
  // The input dtype enters through the floor: half inputs are computed in
  // fp32 (or fp64) like fp32 inputs, then rounded once on output.
  const double f32 = kAccBudgetF32 + 1.5 * floor;
  if (!acc_is_fp64) return {f32, kDefectFactor};
  const double f64 = kAccBudgetF64 + 1.5 * floor;
  return {f64, kDefectFactor * f32 / f64};
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kInside:
      return "inside";
    case Verdict::kAtLimit:
      return "at-limit";
    case Verdict::kOutside:
      return "outside";
    case Verdict::kDefect:
      return "defect";
  }
  return "?";
}

Verdict classify(const ErrorStats& stats, const ErrorBudget& budget, double floor) {
  if (stats.unwritten > 0 || stats.nan_inf > 0 ||
      !(stats.rel_l2 <= budget.defect_factor * budget.rel_l2))
    return Verdict::kDefect;
  if (stats.rel_l2 > budget.rel_l2) return Verdict::kOutside;
  if (floor > 0 && stats.rel_l2 <= 1.25 * floor) return Verdict::kAtLimit;
  return Verdict::kInside;
}

Verdict worst(Verdict a, Verdict b) { return severity(a) >= severity(b) ? a : b; }

OutputScore make_output_score(std::string name, const ErrorStats& stats, const ErrorBudget& budget,
                              double floor) {
  OutputScore o;
  o.name = std::move(name);
  o.stats = stats;
  o.budget = budget;
  o.floor = floor;
  o.verdict = classify(stats, budget, floor);
  return o;
}

Verdict worst_verdict(const std::vector<OutputScore>& outputs) {
  Verdict v = Verdict::kInside;
  bool first = true;
  for (const auto& o : outputs) {
    v = first ? o.verdict : worst(v, o.verdict);
    first = false;
  }
  return v;
}

const OutputScore* headline(const std::vector<OutputScore>& outputs) {
  const OutputScore* best = nullptr;
  double best_ratio = -1;
  for (const auto& o : outputs) {
    const double r = o.budget.rel_l2 > 0 ? o.stats.rel_l2 / o.budget.rel_l2 : o.stats.rel_l2;
    if (best == nullptr || !(r <= best_ratio)) {
      best = &o;
      best_ratio = r;
    }
  }
  return best;
}

}  // namespace ssmtune
