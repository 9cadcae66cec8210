// The library runtime: selection, per-process kernel memo, launch, for the
// forward, the backward and the decode step.
#include "ssmtune/runtime.h"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "cache/db_path.h"
#include "cache/db_stack.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "jit/compiler.h"
#include "jit/device.h"
#include "runtime/call_args.h"
#include "runtime/library_tuner.h"
#include "runtime/prepared_bwd_call.h"
#include "runtime/prepared_call.h"
#include "runtime/prepared_step_call.h"
#include "runtime/saved_states.h"
#include "runtime/selector.h"
#include "tuner/bwd/family.h"
#include "tuner/bwd/runner.h"
#include "tuner/fwd/family.h"
#include "tuner/fwd/runner.h"
#include "tuner/session.h"
#include "tuner/step/family.h"
#include "tuner/step/runner.h"

namespace ssmtune {
namespace {

// The memo's key: the problem's sizes and dtype and flags packed, so the
// hot path neither builds the text key nor compares strings.
using ProblemId = std::array<int64_t, 6>;

ProblemId id_of(const FwdProblem& p) {
  const int64_t flags = (int64_t{p.variable_b} << 0) | (int64_t{p.variable_c} << 1) |
                        (int64_t{p.has_d} << 2) | (int64_t{p.has_z} << 3) |
                        (int64_t{p.has_delta_bias} << 4) | (int64_t{p.delta_softplus} << 5) |
                        (int64_t{p.return_last_state} << 6) | (int64_t{p.has_initial_state} << 7) |
                        (static_cast<int64_t>(p.dtype) << 8);
  return {p.batch, p.dim, p.seqlen, p.dstate, p.groups, flags};
}

ProblemId id_of(const bwd::BwdProblem& p) {
  ProblemId id = id_of(p.fwd);
  id[5] |= int64_t{p.has_dlast} << 16;
  return id;
}

ProblemId id_of(const step::StepProblem& p) {
  const int64_t flags = (int64_t{p.has_d} << 0) | (int64_t{p.has_z} << 1) |
                        (int64_t{p.has_dt_bias} << 2) | (int64_t{p.softplus} << 3) |
                        (int64_t{p.has_indices} << 4) | (static_cast<int64_t>(p.dtype) << 8) |
                        (static_cast<int64_t>(p.state_dtype) << 12);
  return {p.batch, p.heads, p.headdim, p.dstate, p.groups, flags};
}

// Compiled kernels per problem. Entries live on the heap and are never
// freed: a tune retires a problem's entry (out of the map, so the next call
// selects again) but the pointers handed out stay valid.
template <typename Choice, typename Kernel>
struct KernelMemo {
  struct Entry {
    Choice choice;
    std::shared_ptr<Kernel> kernel;
  };
  std::shared_mutex mu;
  std::map<ProblemId, std::unique_ptr<Entry>> entries;
  std::vector<std::unique_ptr<Entry>> retired;

  const Entry* find(const ProblemId& id) {
    std::shared_lock<std::shared_mutex> lock(mu);
    auto it = entries.find(id);
    return it == entries.end() ? nullptr : it->second.get();
  }
  const Entry* insert(const ProblemId& id, Entry e) {
    std::unique_lock<std::shared_mutex> lock(mu);
    return entries.emplace(id, std::make_unique<Entry>(std::move(e))).first->second.get();
  }
  void retire(const ProblemId& id) {
    std::unique_lock<std::shared_mutex> lock(mu);
    auto it = entries.find(id);
    if (it == entries.end()) return;
    retired.push_back(std::move(it->second));
    entries.erase(it);
  }
};

// Prepared calls per layout key, never freed, so the pointers handed out
// stay valid until the runtime goes; plans of a problem tuned since they
// were prepared are retired (a new prepare selects again).
template <typename Call>
struct PlanCache {
  std::shared_mutex mu;
  std::map<std::vector<int64_t>, std::unique_ptr<Call>> plans;
  std::vector<std::unique_ptr<Call>> retired;

  void retire(const std::string& problem_key) {
    std::unique_lock<std::shared_mutex> lock(mu);
    for (auto it = plans.begin(); it != plans.end();) {
      if (it->second->problem().key() == problem_key) {
        retired.push_back(std::move(it->second));
        it = plans.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The cached plan of `key`, else make() and keep it (a racing thread's
  // equal plan wins; ours is dropped).
  template <typename Make>
  Result<const Call*> get(std::vector<int64_t> key, Make&& make) {
    {
      std::shared_lock<std::shared_mutex> lock(mu);
      auto it = plans.find(key);
      if (it != plans.end()) return it->second.get();
    }
    SSMTUNE_ASSIGN_OR_RETURN(std::unique_ptr<Call> made, make());
    std::unique_lock<std::shared_mutex> lock(mu);
    return plans.emplace(std::move(key), std::move(made)).first->second.get();
  }
};

// Runtime-owned scratch per stream, allocated on first use.
template <typename Scratch>
struct StreamScratch {
  std::mutex mu;
  std::map<void*, std::unique_ptr<Scratch>> by_stream;

  Scratch& get(void* stream) {
    std::lock_guard<std::mutex> lock(mu);
    auto& s = by_stream[stream];
    if (!s) s = std::make_unique<Scratch>();
    return *s;
  }
};

template <typename Choice>
std::string choice_text(const std::string& problem_key, const Choice& c, bool in_use) {
  return problem_key + ": " + c.config.key() + " [" + to_string(c.rule) +
         (in_use ? ", in use] " : "] ") + c.reason;
}

Status check_scratch_alignment(const void* scratch) {
  if (reinterpret_cast<uintptr_t>(scratch) % 256 != 0)
    return Status::invalid_argument("scratch: pointer is not aligned to 256 bytes");
  return Status::ok();
}

// Where a runtime has no database to write cubins to: one in-memory cache for
// the process, so a runtime created after another (a second device, a test's
// forced configs, a read-only database) reuses what the first compiled. Keys
// hash everything that changes a cubin (sources, options, NVRTC, arch).
std::shared_ptr<jit::CubinCache> process_memory_cubins() {
  static const std::shared_ptr<jit::CubinCache> kCache = std::make_shared<jit::MemoryCubinCache>();
  return kCache;
}

}  // namespace

struct Runtime::Impl {
  jit::Context context;
  jit::DeviceInfo device;
  std::unique_ptr<cache::DbStack> db;  // selection (local, then shared layers); guarded by db_mu
  std::shared_ptr<jit::CubinCache> cubins;  // the database's, or process_memory_cubins()
  std::unique_ptr<jit::Compiler> compiler;
  Versions versions;
  std::mutex db_mu;
  std::string db_path;
  double tune_budget_s = 0;             // tune on first use; 0: off
  std::unique_ptr<LibraryTuner> tuner;  // with a database: Runtime::tune, tune on first use
  // $SSMTUNE_FORCE_CONFIG: one config for every problem of its family.
  std::optional<FwdConfig> forced;
  std::optional<bwd::BwdConfig> forced_bwd;
  std::optional<step::StepConfig> forced_step;

  KernelMemo<ConfigChoice, FwdKernel> fwd_kernels;
  KernelMemo<BwdChoice, bwd::BwdKernel> bwd_kernels;
  KernelMemo<StepChoice, step::StepKernel> step_kernels;
  std::mutex compile_mu;  // one compilation at a time per runtime

  PlanCache<PreparedCall> fwd_plans;
  PlanCache<PreparedBwdCall> bwd_plans;
  PlanCache<PreparedStepCall> step_plans;
  // The saving variants of forward kernels (training: they write the
  // backward's states), by the plain kernel they vary (one per problem and
  // config; the entry keeps it alive, so its address is not reused): found
  // per launch without formatting a key. Built under compile_mu.
  struct SavingEntry {
    std::shared_ptr<const FwdKernel> plain, saving;
  };
  std::unordered_map<const FwdKernel*, SavingEntry> saving_kernels;
  std::shared_mutex saving_mu;
  StreamScratch<FwdScratch> fwd_scratch;
  StreamScratch<bwd::BwdScratch> bwd_scratch;

  Impl(jit::Context c, jit::DeviceInfo d) : context(std::move(c)), device(std::move(d)) {}

  std::vector<cache::DbLayer> layers() { return db ? db->layers() : std::vector<cache::DbLayer>(); }

  Result<ConfigChoice> choose(const FwdProblem& p) {
    if (forced) return forced_choice<ConfigChoice>(*forced);
    std::lock_guard<std::mutex> lock(db_mu);
    return choose_config(layers(), device, versions, p);
  }
  Result<BwdChoice> choose(const bwd::BwdProblem& p) {
    if (forced_bwd) return forced_choice<BwdChoice>(*forced_bwd);
    std::lock_guard<std::mutex> lock(db_mu);
    return choose_bwd_config(layers(), device, versions, p);
  }
  Result<StepChoice> choose(const step::StepProblem& p) {
    if (forced_step) return forced_choice<StepChoice>(*forced_step);
    std::lock_guard<std::mutex> lock(db_mu);
    return choose_step_config(layers(), device, versions, p);
  }
  bool is_forced(const FwdProblem&) const { return forced.has_value(); }
  bool is_forced(const bwd::BwdProblem&) const { return forced_bwd.has_value(); }
  bool is_forced(const step::StepProblem&) const { return forced_step.has_value(); }

  template <typename Choice, typename Config>
  static Choice forced_choice(const Config& config) {
    Choice c;
    c.config = config;
    c.reason = "forced by $SSMTUNE_FORCE_CONFIG";
    return c;
  }

  Result<std::shared_ptr<FwdKernel>> build(const FwdProblem& p, const FwdConfig& c) {
    SSMTUNE_ASSIGN_OR_RETURN(
        FwdKernel k, build_fwd_kernel(*compiler, p, c, device.arch(), device.max_shared_per_block));
    return std::make_shared<FwdKernel>(std::move(k));
  }
  Result<std::shared_ptr<bwd::BwdKernel>> build(const bwd::BwdProblem& p, const bwd::BwdConfig& c) {
    SSMTUNE_ASSIGN_OR_RETURN(bwd::BwdKernel k, bwd::build_bwd_kernel(*compiler, p, c, device.arch(),
                                                                     device.max_shared_per_block));
    return std::make_shared<bwd::BwdKernel>(std::move(k));
  }
  Result<std::shared_ptr<step::StepKernel>> build(const step::StepProblem& p,
                                                  const step::StepConfig& c) {
    SSMTUNE_ASSIGN_OR_RETURN(step::StepKernel k,
                             step::build_step_kernel(*compiler, p, c, device.arch()));
    return std::make_shared<step::StepKernel>(std::move(k));
  }

  // The saving variant of a prepared forward's kernel: compiled (or loaded
  // from the cubin cache) on first use. Needs the context current.
  Result<std::shared_ptr<const FwdKernel>> saving_kernel(const PreparedCall& call) {
    const FwdKernel* key = &call.kernel();
    auto find = [&]() -> std::shared_ptr<const FwdKernel> {
      std::shared_lock<std::shared_mutex> read(saving_mu);
      const auto it = saving_kernels.find(key);
      return it != saving_kernels.end() ? it->second.saving : nullptr;
    };
    if (auto found = find()) return found;
    std::lock_guard<std::mutex> compile_lock(compile_mu);
    if (auto found = find()) return found;
    SSMTUNE_ASSIGN_OR_RETURN(FwdKernel k,
                             build_fwd_kernel(*compiler, call.problem(), call.choice().config,
                                              device.arch(), device.max_shared_per_block, true));
    auto kernel = std::make_shared<const FwdKernel>(std::move(k));
    std::unique_lock<std::shared_mutex> write(saving_mu);
    saving_kernels.emplace(key, SavingEntry{call.kernel_ptr(), kernel});
    return kernel;
  }

  // The memo's entry for `p`: selected (and tuned on first use when asked)
  // and compiled (or its cubin loaded from the cache) on first use.
  template <typename Memo, typename Problem>
  Result<const typename Memo::Entry*> entry_for(Memo& memo, const Problem& p) {
    const ProblemId key = id_of(p);
    if (const auto* e = memo.find(key)) return e;
    std::lock_guard<std::mutex> compile_lock(compile_mu);
    if (const auto* e = memo.find(key)) return e;
    SSMTUNE_ASSIGN_OR_RETURN(auto choice, choose(p));
    if (!is_exact(choice.rule) && tune_budget_s > 0 && tuner && !is_forced(p)) {
      SSMTUNE_ASSIGN_OR_RETURN(choice, tune_first(p, std::move(choice)));
    }
    SSMTUNE_ASSIGN_OR_RETURN(auto kernel, build(p, choice.config));
    return memo.insert(key, {std::move(choice), std::move(kernel)});
  }

  static FirstUseResult tune_once(LibraryTuner& t, const FwdProblem& p, double s) {
    return t.tune_on_first_use(fwd_family(), FwdFamilyProblem(p), s);
  }
  static FirstUseResult tune_once(LibraryTuner& t, const bwd::BwdProblem& p, double s) {
    return t.tune_on_first_use(bwd_family(), BwdFamilyProblem(p), s);
  }
  static FirstUseResult tune_once(LibraryTuner& t, const step::StepProblem& p, double s) {
    return t.tune_on_first_use(step_family(), StepFamilyProblem(p), s);
  }

  // Tunes `p` in this process (configs in worker processes), then selects
  // again; a failed tune keeps the earlier choice and says why in its reason.
  template <typename Problem, typename Choice>
  Result<Choice> tune_first(const Problem& p, Choice before) {
    const FirstUseResult r = tune_once(*tuner, p, tune_budget_s);
    if (!r.tuned) {
      before.reason += r.note;
      return before;
    }
    SSMTUNE_ASSIGN_OR_RETURN(Choice after, choose(p));
    after.reason += r.note;
    return after;
  }

  // Drops what this process chose for `problem_key` (after a tune), so the
  // next call or prepare of it selects again. Kernels stay alive through
  // the plans and launches that hold them.
  void forget(const std::string& problem_key) {
    if (auto fwd = FwdProblem::from_key(problem_key)) fwd_kernels.retire(id_of(*fwd));
    if (auto bwd = bwd::BwdProblem::from_key(problem_key)) bwd_kernels.retire(id_of(*bwd));
    if (auto st = step::StepProblem::from_key(problem_key)) step_kernels.retire(id_of(*st));
    fwd_plans.retire(problem_key);
    bwd_plans.retire(problem_key);
    step_plans.retire(problem_key);
  }

  // What explain says: the choice this process runs, which may predate newer
  // database entries, else what selection would pick now.
  template <typename Memo, typename Problem>
  Result<std::string> explain(Memo& memo, const Problem& p) {
    if (const auto* e = memo.find(id_of(p))) return choice_text(p.key(), e->choice, true);
    SSMTUNE_ASSIGN_OR_RETURN(auto c, choose(p));
    return choice_text(p.key(), c, false);
  }
};

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

Result<std::unique_ptr<Runtime>> Runtime::create(const RuntimeOptions& o) {
  SSMTUNE_ASSIGN_OR_RETURN(jit::Context ctx, jit::Context::create(o.device));
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceInfo info, jit::query_device(o.device));
  SSMTUNE_ASSIGN_OR_RETURN(jit::TemplateSources sources, jit::TemplateSources::load_default());
  auto impl = std::make_unique<Impl>(std::move(ctx), std::move(info));
  impl->versions = {impl->device.driver_version, impl->device.nvrtc_version, sources.hash()};
  if (o.tune_on_first_use_s) {
    if (!(*o.tune_on_first_use_s >= 0))
      return Status::invalid_argument("tune_on_first_use_s must be >= 0 seconds");
    impl->tune_budget_s = *o.tune_on_first_use_s;
  } else {
    SSMTUNE_ASSIGN_OR_RETURN(impl->tune_budget_s, tune_budget_from_env());
  }
  if (const char* f = std::getenv("SSMTUNE_FORCE_CONFIG"); f != nullptr && *f != '\0') {
    auto forced = parse_forced_configs(f);
    if (!forced)
      return Status::invalid_argument("$SSMTUNE_FORCE_CONFIG: " + forced.status().message());
    impl->forced = forced->fwd;
    impl->forced_bwd = forced->bwd;
    impl->forced_step = forced->step;
  }
  if (o.use_db) {
    // A list: the local database, then read-only shared layers (which must exist).
    const std::string list = cache::resolve_db_path(o.db_path);
    SSMTUNE_ASSIGN_OR_RETURN(const cache::DbPathList paths, cache::split_db_paths(list));
    const std::string& path = paths.local;
    impl->db_path = list;
    SSMTUNE_ASSIGN_OR_RETURN(std::vector<cache::TuningDb> shared,
                             cache::DbStack::open_shared(paths));
    auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
    std::error_code ec;
    if (!db && db.status().code() == Code::kIoError && std::filesystem::exists(path, ec)) {
      // A shared database this process cannot write (read-only file or
      // directory): read it, keep compiled cubins in memory, never tune.
      SSMTUNE_ASSIGN_OR_RETURN(cache::TuningDb ro,
                               cache::TuningDb::open(path, cache::OpenMode::kReadOnly));
      impl->db = std::make_unique<cache::DbStack>(std::move(ro), std::move(shared));
      impl->cubins = process_memory_cubins();
    } else {
      if (!db) return db.status();
      impl->db = std::make_unique<cache::DbStack>(std::move(*db), std::move(shared));
      SSMTUNE_ASSIGN_OR_RETURN(auto cubins, cache::SqliteCubinCache::open(list));
      impl->cubins = std::move(cubins);
      LibraryTunerOptions to;
      to.db_path = list;
      to.gpu = o.device;
      impl->tuner = std::make_unique<LibraryTuner>(std::move(to), sources);
    }
  } else {
    impl->cubins = process_memory_cubins();
  }
  impl->compiler = std::make_unique<jit::Compiler>(std::move(sources), impl->cubins.get(), 1);
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

// ---- forward ----

Status Runtime::selective_scan_fwd(const ssmtune_fwd_args& args, void* stream) {
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_call(args));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_ASSIGN_OR_RETURN(const auto* e, impl_->entry_for(impl_->fwd_kernels, call.problem));
  return e->kernel->launch(make_params(call.problem, call.tensors), static_cast<CUstream>(stream),
                           impl_->fwd_scratch.get(stream));
}

Result<const PreparedCall*> Runtime::prepare_fwd(const ssmtune_fwd_args& layout) {
  return impl_->fwd_plans.get(layout_key(layout), [&]() -> Result<std::unique_ptr<PreparedCall>> {
    SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_layout(layout));
    SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
    SSMTUNE_ASSIGN_OR_RETURN(const auto* e, impl_->entry_for(impl_->fwd_kernels, call.problem));
    return std::make_unique<PreparedCall>(this, call, e->choice, e->kernel);
  });
}

Status Runtime::launch_fwd(const PreparedCall& call, const void* const* ptrs, void* scratch,
                           void* stream) {
  return launch_fwd(call, ptrs, scratch, stream, nullptr, 0);
}

Status Runtime::launch_fwd(const PreparedCall& call, const void* const* ptrs, void* scratch,
                           void* stream, void* states, int interval) {
  if (call.owner() != this)
    return Status::invalid_argument("the prepared call belongs to another runtime");
  SSMTUNE_ASSIGN_OR_RETURN(ssmtune_kernels::SsmFwdParams params, call.bind(ptrs));
  if (states != nullptr || interval != 0) {
    if (call.states_bytes(interval) == 0)
      return Status::invalid_argument("states: this call saves none at interval " +
                                      std::to_string(interval) + " (config " +
                                      call.choice().config.key() + "; states_bytes is 0)");
    SSMTUNE_RETURN_IF_ERROR(check_states_buffer(states));
    params.states = static_cast<float*>(states);
    params.states_shift = bwd::states_shift(interval);
  }
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  std::shared_ptr<const FwdKernel> saving;
  if (params.states != nullptr) {
    SSMTUNE_ASSIGN_OR_RETURN(saving, impl_->saving_kernel(call));
  }
  const FwdKernel& kernel = saving ? *saving : call.kernel();
  const auto s = static_cast<CUstream>(stream);
  if (call.scratch_bytes() == 0) return kernel.launch_on(params, s, 0, 0);
  if (scratch == nullptr) return kernel.launch(params, s, impl_->fwd_scratch.get(stream));
  SSMTUNE_RETURN_IF_ERROR(check_scratch_alignment(scratch));
  const auto base = reinterpret_cast<CUdeviceptr>(scratch);
  return kernel.launch_on(params, s, base, base + call.flags_offset());
}

Result<size_t> Runtime::prepare_states(const PreparedCall& call, int interval) {
  if (call.owner() != this)
    return Status::invalid_argument("the prepared call belongs to another runtime");
  const size_t bytes = call.states_bytes(interval);
  if (bytes == 0) return bytes;
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_RETURN_IF_ERROR(impl_->saving_kernel(call).status());
  return bytes;
}

std::string Runtime::explain(const PreparedCall& call) {
  return choice_text(call.problem().key(), call.choice(), true);
}

Result<std::string> Runtime::explain(const ssmtune_fwd_args& args) {
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_call(args));
  return impl_->explain(impl_->fwd_kernels, call.problem);
}

Result<TuneReport> Runtime::tune(const std::string& problem_key, const TuneOptions& options,
                                 const std::function<void(const TuneEvent&)>& progress,
                                 double config_timeout_s) {
  if (!impl_->tuner)
    return Status::invalid_argument("tuning needs a tuning database; this runtime has none");
  SSMTUNE_ASSIGN_OR_RETURN(ParsedProblem parsed, parse_any_problem(problem_key));
  SSMTUNE_ASSIGN_OR_RETURN(TuneReport r, impl_->tuner->tune(*parsed.family, *parsed.problem,
                                                            options, progress, config_timeout_s));
  impl_->forget(r.problem_key);
  return r;
}

// ---- backward ----

Status Runtime::selective_scan_bwd(const ssmtune_bwd_args& args, void* stream) {
  SSMTUNE_ASSIGN_OR_RETURN(BwdCallProblem call, read_bwd_call(args));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_ASSIGN_OR_RETURN(const auto* e, impl_->entry_for(impl_->bwd_kernels, call.problem));
  return e->kernel->launch(bwd::make_params(call.problem, call.tensors),
                           static_cast<CUstream>(stream), impl_->bwd_scratch.get(stream));
}

Result<const PreparedBwdCall*> Runtime::prepare_bwd(const ssmtune_bwd_args& layout) {
  return impl_->bwd_plans.get(
      bwd_layout_key(layout), [&]() -> Result<std::unique_ptr<PreparedBwdCall>> {
        SSMTUNE_ASSIGN_OR_RETURN(BwdCallProblem call, read_bwd_layout(layout));
        SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
        SSMTUNE_ASSIGN_OR_RETURN(const auto* e, impl_->entry_for(impl_->bwd_kernels, call.problem));
        return std::make_unique<PreparedBwdCall>(this, layout, call, e->choice, e->kernel);
      });
}

Status Runtime::launch_bwd(const PreparedBwdCall& call, const void* const* ptrs, void* scratch,
                           void* stream) {
  return launch_bwd(call, ptrs, scratch, stream, nullptr, 0);
}

Status Runtime::launch_bwd(const PreparedBwdCall& call, const void* const* ptrs, void* scratch,
                           void* stream, const void* states, int interval) {
  if (call.owner() != this)
    return Status::invalid_argument("the prepared backward call belongs to another runtime");
  SSMTUNE_ASSIGN_OR_RETURN(ssmtune_kernels::SsmBwdParams params, call.bind(ptrs));
  if (states != nullptr || interval != 0) {
    if (interval != call.states_interval() || interval == 0)
      return Status::invalid_argument(
          "states: saved at interval " + std::to_string(interval) + ", but this backward (" +
          call.choice().config.key() + ") takes " +
          (call.states_interval() == 0 ? std::string("none")
                                       : "interval " + std::to_string(call.states_interval())));
    SSMTUNE_RETURN_IF_ERROR(check_states_buffer(states));
  }
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  const auto s = static_cast<CUstream>(stream);
  if (scratch == nullptr)
    return call.kernel().launch(params, s, impl_->bwd_scratch.get(stream), states);
  SSMTUNE_RETURN_IF_ERROR(check_scratch_alignment(scratch));
  return call.kernel().launch_on(params, s, reinterpret_cast<CUdeviceptr>(scratch), states);
}

std::string Runtime::explain(const PreparedBwdCall& call) {
  return choice_text(call.problem().key(), call.choice(), true);
}

Result<std::string> Runtime::explain_bwd(const ssmtune_bwd_args& args) {
  SSMTUNE_ASSIGN_OR_RETURN(BwdCallProblem call, read_bwd_call(args));
  return impl_->explain(impl_->bwd_kernels, call.problem);
}

// ---- decode step ----

Status Runtime::selective_state_update(const ssmtune_step_args& args, void* stream) {
  SSMTUNE_ASSIGN_OR_RETURN(StepCallProblem call, read_step_call(args));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_ASSIGN_OR_RETURN(const auto* e, impl_->entry_for(impl_->step_kernels, call.problem));
  return e->kernel->launch(step::make_params(call.problem, call.tensors, e->choice.config),
                           static_cast<CUstream>(stream));
}

Result<std::string> Runtime::explain_step(const ssmtune_step_args& args) {
  SSMTUNE_ASSIGN_OR_RETURN(StepCallProblem call, read_step_call(args));
  return impl_->explain(impl_->step_kernels, call.problem);
}

Result<const PreparedStepCall*> Runtime::prepare_step(const ssmtune_step_args& layout) {
  return impl_->step_plans.get(
      step_layout_key(layout), [&]() -> Result<std::unique_ptr<PreparedStepCall>> {
        SSMTUNE_ASSIGN_OR_RETURN(StepCallProblem call, read_step_layout(layout));
        SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
        SSMTUNE_ASSIGN_OR_RETURN(const auto* e,
                                 impl_->entry_for(impl_->step_kernels, call.problem));
        return std::make_unique<PreparedStepCall>(this, call, e->choice, e->kernel);
      });
}

Status Runtime::launch_step(const PreparedStepCall& call, const void* const* ptrs, void* stream) {
  if (call.owner() != this)
    return Status::invalid_argument("the prepared step belongs to another runtime");
  SSMTUNE_ASSIGN_OR_RETURN(ssmtune_kernels::SsmStepParams params, call.bind(ptrs));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  return call.kernel().launch(params, static_cast<CUstream>(stream));
}

std::string Runtime::explain(const PreparedStepCall& call) {
  return choice_text(call.problem().key(), call.choice(), true);
}

}  // namespace ssmtune
