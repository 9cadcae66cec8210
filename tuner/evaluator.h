// Evaluates kernel configs for one problem on one device: fresh random
// inputs uploaded once, the fp64 reference computed once (on the CPU for
// small problems, else on the GPU), then per config: compile (through the
// compiler's cache), load, poison the outputs, run, score against fp64,
// and time. Failures are values (EvalStatus), never exceptions or exits.
// Needs a current context; one Evaluator per thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/stream.h"
#include "tuner/accuracy.h"
#include "tuner/device_problem.h"
#include "tuner/fwd_runner.h"
#include "tuner/gpu_timer.h"
#include "tuner/kernel_config.h"

namespace ssmtune {

enum class EvalStatus {
  kOk,             // ran, inside its budget (or at the precision limit), timed
  kPruned,         // rejected before compiling (illegal, spills, too little occupancy)
  kCompileFailed,  // NVRTC error
  kLaunchFailed,   // the driver refused the launch, or the run failed
  kInaccurate,     // ran, but outside its budget (or a defect)
};
const char* to_string(EvalStatus s);

struct EvalOptions {
  uint64_t seed = 0;  // 0: drawn from std::random_device
  InputDistribution distribution = InputDistribution::kMamba;
  TimingOptions timing;
  bool time = true;
  // Problems with more (batch x dim x seqlen x dstate) than this use the GPU reference.
  double cpu_reference_limit = 5e7;
  double max_error = 0;  // > 0: tighter rel-L2 budget than the dtype's default
};

struct EvalResult {
  KernelConfig config;
  EvalStatus status = EvalStatus::kOk;
  std::string detail;  // why it was pruned, the compile log excerpt, the launch error
  RunScore score;
  Timing timing;
  std::vector<jit::KernelImage> kernels;  // with their resource reports
  double compile_seconds = 0;
};

class Evaluator {
 public:
  static Result<Evaluator> create(const jit::DeviceInfo& device, jit::Compiler& compiler,
                                  const Problem& problem, const EvalOptions& options);

  // Compiles every legal config in parallel on the compiler's pool, so that
  // evaluate() finds them in the cache.
  void precompile(const std::vector<KernelConfig>& configs);

  EvalResult evaluate(const KernelConfig& config) { return evaluate_with(config, options_.timing); }
  // With a timing fidelity of its own (successive halving's rungs).
  EvalResult evaluate_with(const KernelConfig& config, const TimingOptions& timing);

  const Problem& problem() const { return problem_; }
  const HostOutputs& reference() const { return reference_; }
  uint64_t seed() const { return seed_; }
  const char* reference_kind() const { return gpu_reference_ ? "gpu fp64" : "cpu fp64"; }

 private:
  Evaluator(const jit::DeviceInfo& device, jit::Compiler& compiler, Problem problem,
            EvalOptions options, DeviceProblem dp, jit::Stream stream, GpuTimer timer)
      : device_(device),
        compiler_(&compiler),
        problem_(std::move(problem)),
        options_(options),
        dp_(std::move(dp)),
        stream_(std::move(stream)),
        timer_(std::move(timer)) {}

  jit::DeviceInfo device_;
  jit::Compiler* compiler_;
  Problem problem_;
  EvalOptions options_;
  DeviceProblem dp_;
  jit::Stream stream_;
  GpuTimer timer_;
  FwdScratch scratch_;
  HostOutputs reference_;
  // Scores of configs already checked: a re-evaluation at a higher timing
  // fidelity (successive halving) re-times but does not re-score.
  std::map<std::string, std::pair<RunScore, EvalResult>> scored_;
  uint64_t seed_ = 0;
  bool gpu_reference_ = false;
};

// Floors of one forward call on a device: bytes over the copy bandwidth and
// exps over the exp unit's rate (16 per clock per SM).
struct Floors {
  double bytes_ms = 0;
  double exp_ms = 0;
  double floor_ms() const { return bytes_ms > exp_ms ? bytes_ms : exp_ms; }
};
// `copy_gbs`: measured device-to-device bandwidth (bytes read + written).
Floors floors(const Problem& p, const jit::DeviceInfo& device, double copy_gbs = 4220);

}  // namespace ssmtune
