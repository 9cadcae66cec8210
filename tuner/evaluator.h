// Evaluates configs of one problem of any kernel family on one device: the
// family's bench (fresh random inputs uploaded once, the fp64 reference
// computed once on the CPU or the GPU), then per config: compile (through
// the compiler's cache), load, poison the outputs, run, score every named
// output against fp64, and time. Failures are values (MeasureStatus),
// never exceptions or exits. Needs a current context; one per thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/stream.h"
#include "tuner/accuracy.h"
#include "tuner/family.h"
#include "tuner/gpu_timer.h"
#include "tuner/records.h"

namespace ssmtune {

struct EvalOptions {
  uint64_t seed = 0;  // 0: drawn from std::random_device
  InputDistribution distribution = InputDistribution::kMamba;
  TimingOptions timing;
  bool time = true;
  double cpu_reference_limit = 5e7;  // see BenchOptions
  double max_error = 0;  // > 0: a tighter rel-L2 budget than the dtype's default (every output)
  bool states_given = false;  // see BenchOptions
};

struct EvalResult {
  std::string config;
  MeasureStatus status = MeasureStatus::kOk;
  std::string detail;                // why it was pruned, the compile log excerpt, the launch error
  std::vector<OutputScore> outputs;  // each named output's score, in the family's order
  Verdict verdict = Verdict::kInside;  // the worst over the outputs
  Timing timing;
  std::vector<jit::KernelImage> kernels;  // with their resource reports
  double compile_seconds = 0;

  // The named output's score, or null.
  const OutputScore* output(const std::string& name) const;
};

// The result as a database record (errors per output, resources, timing);
// device, versions and timestamp are the caller's.
Measurement to_measurement(const EvalResult& r, const std::string& family,
                           const std::string& problem_key);

class Evaluator {
 public:
  static Result<Evaluator> create(const jit::DeviceInfo& device, jit::Compiler& compiler,
                                  const KernelFamily& family, const FamilyProblem& problem,
                                  const EvalOptions& options);

  // Compiles every config in parallel on the compiler's pool, so that
  // evaluate() finds them in the cache.
  void precompile(const std::vector<std::string>& configs);

  EvalResult evaluate(const std::string& config) { return evaluate_with(config, options_.timing); }
  // With a timing fidelity of its own (successive halving's rungs).
  EvalResult evaluate_with(const std::string& config, const TimingOptions& timing);

  const KernelFamily& family() const { return *family_; }
  const FamilyProblem& problem() const { return *problem_; }
  uint64_t seed() const { return seed_; }
  const char* reference_kind() const { return bench_->reference_kind(); }

 private:
  Evaluator() = default;

  jit::DeviceInfo device_;
  jit::Compiler* compiler_ = nullptr;
  const KernelFamily* family_ = nullptr;
  std::unique_ptr<FamilyProblem> problem_;
  EvalOptions options_;
  std::unique_ptr<jit::Stream> stream_;
  std::unique_ptr<GpuTimer> timer_;
  std::unique_ptr<ProblemBench> bench_;
  // Scores of configs already checked: a re-evaluation at a higher timing
  // fidelity (successive halving) re-times but does not re-score.
  std::map<std::string, EvalResult> scored_;
  uint64_t seed_ = 0;
};

}  // namespace ssmtune
