// FwdProblem flags.
#include "cli/problem_options.h"

#include <vector>

#include "tuner/step/problem.h"

namespace ssmtune::cli {

namespace {

constexpr const char* kShapeOptions[] = {
    "--batch",         "--dim",    "--seqlen",      "--dstate",       "--groups",   "--dtype",
    "--constant-bc",   "--with-d", "--with-z",      "--delta-bias",   "--softplus", "--last-state",
    "--initial-state", "--heads",  "--state-dtype", "--state-indices"};
// Options of the scan's families that the decode step has no use for, and
// the step's own that the scan has none for.
const std::vector<const char*> kScanOnly = {"--seqlen", "--constant-bc", "--last-state",
                                            "--initial-state"};
const std::vector<const char*> kStepOnly = {"--heads", "--state-dtype", "--state-indices"};

}  // namespace

Status ProblemArgs::check_given() const {
  if (cmd == nullptr || cmd->count("--problem") == 0) return Status::ok();
  if (key.empty())
    return Status::invalid_argument(
        "--problem needs a key, e.g. fwd:b8.d1536.l2048.n16.g1.fp32.vB.vC ('ssmtune db list "
        "problems' shows those tuned)");
  for (const char* opt : kShapeOptions)
    if (cmd->count(opt) > 0)
      return Status::invalid_argument(std::string("--problem KEY fixes every size and flag; ") +
                                      opt + " cannot be combined with it");
  return Status::ok();
}

Result<ParsedProblem> ProblemArgs::any_problem() const {
  SSMTUNE_RETURN_IF_ERROR(check_given());
  if (!key.empty()) return parse_any_problem(key);
  const KernelFamily* f = find_family(family);
  if (f == nullptr) return Status::invalid_argument("unknown kernel family '" + family + "'");
  const bool is_step = std::string(f->name()) == "step";
  if (cmd != nullptr)
    for (const char* opt : is_step ? kScanOnly : kStepOnly)
      if (cmd->count(opt) > 0)
        return Status::invalid_argument(std::string(opt) + " does not apply to the " + family +
                                        " family");
  if (is_step) {
    SSMTUNE_ASSIGN_OR_RETURN(step::StepProblem p, step_problem());
    SSMTUNE_ASSIGN_OR_RETURN(auto problem, f->parse_problem(p.key()));
    return ParsedProblem{f, std::move(problem)};
  }
  ProblemArgs sizes = *this;
  sizes.key.clear();
  sizes.cmd = nullptr;  // checked above
  SSMTUNE_ASSIGN_OR_RETURN(FwdProblem p, sizes.problem());
  const std::string body = p.key().substr(sizeof(kFwdKeyPrefix) - 1);
  SSMTUNE_ASSIGN_OR_RETURN(auto problem, f->parse_problem(family + ":" + body));
  return ParsedProblem{f, std::move(problem)};
}

Result<FwdProblem> ProblemArgs::problem() const {
  SSMTUNE_RETURN_IF_ERROR(check_given());
  if (!key.empty()) return FwdProblem::from_key(key);
  FwdProblem p;
  p.batch = batch;
  p.dim = dim;
  p.seqlen = seqlen;
  p.dstate = dstate;
  p.groups = groups;
  SSMTUNE_ASSIGN_OR_RETURN(p.dtype, parse_dtype(dtype));
  p.variable_b = p.variable_c = !constant_bc;
  p.has_d = with_d;
  p.has_z = with_z;
  p.has_delta_bias = delta_bias;
  p.delta_softplus = softplus;
  p.return_last_state = last_state;
  p.has_initial_state = initial_state;
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  return p;
}

Result<step::StepProblem> ProblemArgs::step_problem() const {
  step::StepProblem p;
  p.batch = batch;
  p.heads = heads;
  if (heads < 1 || dim % heads != 0)
    return Status::invalid_argument("--dim (" + std::to_string(dim) +
                                    ") must be a multiple of --heads (" + std::to_string(heads) +
                                    ")");
  p.headdim = dim / heads;
  p.dstate = dstate;
  p.groups = groups;
  SSMTUNE_ASSIGN_OR_RETURN(p.dtype, parse_dtype(dtype));
  SSMTUNE_ASSIGN_OR_RETURN(p.state_dtype, parse_dtype(state_dtype));
  p.has_d = with_d;
  p.has_z = with_z;
  p.has_dt_bias = delta_bias;
  p.softplus = softplus;
  p.has_indices = state_indices;
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  return p;
}

void add_problem_options(CLI::App* cmd, ProblemArgs& a) {
  a.cmd = cmd;
  cmd->add_option("--problem", a.key,
                  "a problem key, as `ssmtune db list` prints it (replaces the options below)");
  cmd->add_option("--family", a.family, "kernel family of the size and flag options (fwd, ...)")
      ->capture_default_str();
  cmd->add_option("--batch", a.batch, "batch size")->capture_default_str();
  cmd->add_option("--dim", a.dim, "channels (d_inner)")->capture_default_str();
  cmd->add_option("--seqlen", a.seqlen, "sequence length")->capture_default_str();
  cmd->add_option("--dstate", a.dstate, "state size (1 to 256)")->capture_default_str();
  cmd->add_option("--groups", a.groups, "B/C groups")->capture_default_str();
  cmd->add_option("--dtype", a.dtype, "input dtype: fp32, fp16 or bf16")->capture_default_str();
  cmd->add_flag("--constant-bc", a.constant_bc, "B and C are (dim, dstate), not per timestep");
  cmd->add_flag("--with-d", a.with_d, "skip connection D * u");
  cmd->add_flag("--with-z", a.with_z, "gate: out_z = y * silu(z)");
  cmd->add_flag("--delta-bias", a.delta_bias, "delta + delta_bias");
  cmd->add_flag("--softplus", a.softplus, "softplus on delta");
  cmd->add_flag("--last-state", a.last_state, "return the last state");
  cmd->add_flag("--initial-state", a.initial_state, "start from an initial state h0");
  cmd->add_option("--heads", a.heads, "step: heads (--dim is heads x headdim)")
      ->capture_default_str();
  cmd->add_option("--state-dtype", a.state_dtype, "step: the state's dtype: fp32, fp16 or bf16")
      ->capture_default_str();
  cmd->add_flag("--state-indices", a.state_indices,
                "step: state rows picked per batch entry (continuous batching)");
}

}  // namespace ssmtune::cli
