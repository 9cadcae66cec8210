// The seam every kernel family plugs into (the forward, the backward, the
// decode step): what a family's problems and configs are, its search space
// and default, the kernels a config instantiates, and a bench that runs and
// scores configs of one problem on the device. Everything generic (compile,
// evaluate in the worker, time, select, store, look up, explain) works on
// this interface and on keys, so adding a family is its templates, its
// folder under tuner/, and one line in tuner/families.cpp.
// Families are stateless singletons: thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/driver.h"
#include "jit/program_builder.h"
#include "ssmtune/status.h"
#include "tuner/accuracy.h"

namespace ssmtune {

// Lower bounds of one call on a device: bytes over the copy bandwidth and
// exps over the exp unit's rate (16 per clock per SM).
struct Floors {
  double bytes = 0;  // moved once
  double exps = 0;   // evaluated once
  double bytes_ms = 0;
  double exp_ms = 0;
  double floor_ms() const { return bytes_ms > exp_ms ? bytes_ms : exp_ms; }
};
// `bytes` moved once and `exps` evaluated once on `device`; `copy_gbs` is
// the measured device-to-device bandwidth (bytes read + written).
Floors floors_for(double bytes, double exps, const jit::DeviceInfo& device, double copy_gbs = 4220);

// How random inputs are drawn (every family draws its tensors this way).
enum class InputDistribution {
  kMamba,      // mamba_ssm's test: u, B, C, z, D, h0 ~ randn; delta, delta_bias ~ 0.5 * rand;
               // A ~ -0.5 * rand
  kSlowDecay,  // kMamba with A ~ -1e-3 * rand: exp(delta * A) close to 1, the state remembers
               // thousands of steps (the hard case for accumulation error)
  kLarge,      // kMamba with u, B, C ~ 4 * randn and delta ~ 2 * rand (stress ranges)
};
const char* to_string(InputDistribution d);  // "mamba", "slow-decay", "large"
Result<InputDistribution> parse_distribution(const std::string& s);

// A parsed, validated problem of one family.
class FamilyProblem {
 public:
  virtual ~FamilyProblem() = default;
  // Stable key with the family prefix ("fwd:b8.d1536..."): the database keys on it.
  virtual std::string key() const = 0;
  // Problems of one class differ only in sizes (same dtypes and flags): a
  // config tuned for one is a candidate for the others.
  virtual std::string class_key() const = 0;
  // Log-space distance over the sizes to a problem of the same class.
  virtual double distance(const FamilyProblem& other) const = 0;
  virtual Floors floors(const jit::DeviceInfo& device) const = 0;
};

// One point of a family's space for a problem: a candidate, or pruned
// before compiling with its reason.
struct SpaceEntry {
  std::string config;  // the family's config key
  bool pruned = false;
  std::string reason;
};

struct SpaceOptions {
  bool include_fp64 = true;  // fp64-accumulation configs: the accuracy anchors
  bool include_poly = true;  // polynomial exp variants
};

struct DefaultChoice {
  std::string config;
  std::string reason;  // why this config, in one line
};

// A config's kernels loaded against a bench's tensors.
class LoadedConfig {
 public:
  virtual ~LoadedConfig() = default;
  virtual const std::vector<jit::KernelImage>& images() const = 0;
  // Writes the poison pattern into every output.
  virtual Status poison(CUstream stream) = 0;
  // Runs the config once (every launch of its plan).
  virtual Status launch(CUstream stream) = 0;
  // Downloads every named output of the last launch (after the stream is
  // synchronized) and scores it against the fp64 reference.
  virtual Result<std::vector<OutputScore>> score() = 0;
};

struct BenchOptions {
  uint64_t seed = 1;
  InputDistribution distribution = InputDistribution::kMamba;
  // Problems with more work than this (the family's measure, e.g. batch x
  // dim x seqlen x dstate) use the GPU fp64 reference.
  double cpu_reference_limit = 5e7;
  // The backward: time launches given the states a training forward saved
  // (as the eager training path runs it), for the configs that take them;
  // each config's first launch computes them. Other families ignore it.
  bool states_given = false;
};

// One problem's inputs, fp64 reference and outputs on the device.
// Needs a current context; one per thread.
class ProblemBench {
 public:
  virtual ~ProblemBench() = default;
  virtual const char* reference_kind() const = 0;  // "cpu fp64" or "gpu fp64"
  // Loads `config`'s kernels from `program` (compiled from the family's
  // instantiations for this problem and config).
  virtual Result<std::unique_ptr<LoadedConfig>> load(const std::string& config,
                                                     const jit::CompiledProgram& program) = 0;
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  virtual const char* name() const = 0;     // "fwd": the problem keys' prefix
  virtual const char* summary() const = 0;  // one line for --help and reports

  // --- Problems and configs (pure)
  // Parses and validates; keys without a family prefix are accepted where
  // the family allows (the forward's, from before families existed).
  virtual Result<std::unique_ptr<FamilyProblem>> parse_problem(const std::string& key) const = 0;
  // The canonical form of a config key, or why it is not one.
  virtual Result<std::string> canonical_config(const std::string& config) const = 0;
  // Ok, or why `config` cannot run `problem` on `device` (shared memory
  // over the device's opt-in limit included).
  virtual Status check_config(const FamilyProblem& problem, const std::string& config,
                              const jit::DeviceInfo& device) const = 0;
  virtual std::vector<SpaceEntry> search_space(const FamilyProblem& problem,
                                               const jit::DeviceInfo& device,
                                               const SpaceOptions& options) const = 0;
  virtual DefaultChoice heuristic_default(const FamilyProblem& problem,
                                          const jit::DeviceInfo& device) const = 0;
  // The order in which a time-limited first look meets the candidates
  // (`first`, the default, leads).
  virtual std::vector<std::string> first_look_order(const std::vector<std::string>& candidates,
                                                    const std::string& first) const = 0;
  // Empty when the compiled kernels are fit to time; else why not.
  virtual std::string prune_by_resources(const FamilyProblem& problem, const std::string& config,
                                         const std::vector<jit::KernelImage>& kernels,
                                         const jit::DeviceInfo& device) const = 0;
  // A static cost model over kernels fit to time: 0 for most, more for ones
  // the resource report suggests are slow (spills, low occupancy). A session
  // measures a ready config of a lower rank first. Default: 0 for every one.
  virtual int resource_rank(const FamilyProblem& /*problem*/, const std::string& /*config*/,
                            const std::vector<jit::KernelImage>& /*kernels*/,
                            const jit::DeviceInfo& /*device*/) const {
    return 0;
  }
  // Whether the config accumulates in fp64 (the accuracy anchors).
  virtual bool is_fp64_anchor(const std::string& config) const = 0;

  // --- Kernels
  // The kernel instantiations of `config` for `problem`, in one program.
  virtual Result<std::vector<jit::Instantiation>> instantiations(
      const FamilyProblem& problem, const std::string& config,
      const jit::DeviceInfo& device) const = 0;

  // --- Evaluation (needs a current context)
  virtual Result<std::unique_ptr<ProblemBench>> make_bench(const FamilyProblem& problem,
                                                           const jit::DeviceInfo& device,
                                                           jit::Compiler& compiler,
                                                           const BenchOptions& options,
                                                           CUstream stream) const = 0;
};

// Spills past `tolerated_bytes` in any of `kernels` ("spills 24 B stores / 24 B
// loads (...)"), or "" for none: the resource pruning every family makes. A
// few bytes are the call frame of a rarely taken libdevice slow path, not
// register pressure.
inline constexpr int kToleratedSpillBytes = 16;
std::string spill_reason(const std::vector<jit::KernelImage>& kernels,
                         int tolerated_bytes = kToleratedSpillBytes);

// A space entry for `config`, pruned ("fp64 accumulation left out") when it
// accumulates in fp64 and the options leave those out.
SpaceEntry space_entry(const std::string& config, bool fp64, const SpaceOptions& options);

// `first` (when a candidate), then the other candidates in their order: the
// first look of a family with no better order.
std::vector<std::string> default_first_look(const std::vector<std::string>& candidates,
                                            const std::string& first);

// The one program a config compiles to (its cache key follows from it).
Result<jit::ProgramSpec> program_for(const KernelFamily& family, const FamilyProblem& problem,
                                     const std::string& config, const jit::DeviceInfo& device);

// --- The registry (tuner/families.cpp)
const std::vector<const KernelFamily*>& all_families();
// nullptr when no family has that name.
const KernelFamily* find_family(const std::string& name);
// The family a problem key names (no prefix: the forward).
Result<const KernelFamily*> family_of_problem(const std::string& problem_key);
// Parses a problem key of any family.
struct ParsedProblem {
  const KernelFamily* family = nullptr;
  std::unique_ptr<FamilyProblem> problem;
};
Result<ParsedProblem> parse_any_problem(const std::string& problem_key);

}  // namespace ssmtune
