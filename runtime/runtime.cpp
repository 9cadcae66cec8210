// The library runtime: selection, per-process kernel memo, launch.
#include "ssmtune/runtime.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "cache/db_path.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "jit/compiler.h"
#include "jit/device.h"
#include "runtime/call_args.h"
#include "runtime/first_use_tuner.h"
#include "runtime/prepared_call.h"
#include "runtime/selector.h"
#include "tuner/fwd/runner.h"

namespace ssmtune {

struct Runtime::Impl {
  jit::Context context;
  jit::DeviceInfo device;
  std::unique_ptr<cache::TuningDb> db;  // selection; guarded by db_mu
  std::unique_ptr<jit::CubinCache> cubins;
  std::unique_ptr<jit::Compiler> compiler;
  Versions versions;
  std::mutex db_mu;
  std::string db_path;
  double tune_budget_s = 0;  // tune on first use; 0: off
  // $SSMTUNE_FORCE_CONFIG: one config for every problem (tests, experiments).
  std::optional<FwdConfig> forced;

  struct Entry {
    ConfigChoice choice;
    std::shared_ptr<FwdKernel> kernel;
  };
  // The memo's key: the problem's sizes and dtype and flags packed, so the
  // hot path neither builds the text key nor compares strings.
  using ProblemId = std::array<int64_t, 6>;
  static ProblemId id_of(const FwdProblem& p) {
    const int64_t flags =
        (int64_t{p.variable_b} << 0) | (int64_t{p.variable_c} << 1) | (int64_t{p.has_d} << 2) |
        (int64_t{p.has_z} << 3) | (int64_t{p.has_delta_bias} << 4) |
        (int64_t{p.delta_softplus} << 5) | (int64_t{p.return_last_state} << 6) |
        (int64_t{p.has_initial_state} << 7) | (static_cast<int64_t>(p.dtype) << 8);
    return {p.batch, p.dim, p.seqlen, p.dstate, p.groups, flags};
  }
  std::shared_mutex kernels_mu;
  std::map<ProblemId, Entry> kernels;
  std::mutex compile_mu;  // one compilation at a time per runtime

  // Prepared calls per layout key (runtime/prepared_call.h); never erased,
  // so the pointers handed out stay valid until the runtime goes.
  std::shared_mutex plans_mu;
  std::map<std::vector<int64_t>, std::unique_ptr<PreparedCall>> plans;

  std::mutex scratch_mu;
  std::map<void*, std::unique_ptr<FwdScratch>> scratch;  // per stream

  Impl(jit::Context c, jit::DeviceInfo d) : context(std::move(c)), device(std::move(d)) {}

  Result<ConfigChoice> choose(const FwdProblem& p) {
    if (forced) {
      ConfigChoice c;
      c.config = *forced;
      c.reason = "forced by $SSMTUNE_FORCE_CONFIG";
      return c;
    }
    std::lock_guard<std::mutex> lock(db_mu);
    return choose_config(db.get(), device, versions, p);
  }

  Result<const Entry*> entry_for(const FwdProblem& p) {
    const ProblemId key = id_of(p);
    {
      std::shared_lock<std::shared_mutex> lock(kernels_mu);
      auto it = kernels.find(key);
      if (it != kernels.end()) return &it->second;
    }
    std::lock_guard<std::mutex> compile_lock(compile_mu);
    {
      std::shared_lock<std::shared_mutex> lock(kernels_mu);
      auto it = kernels.find(key);
      if (it != kernels.end()) return &it->second;
    }
    SSMTUNE_ASSIGN_OR_RETURN(ConfigChoice choice, choose(p));
    if (choice.rule != SelectRule::kExact && tune_budget_s > 0 && db && !forced &&
        !db->read_only()) {
      SSMTUNE_ASSIGN_OR_RETURN(choice, tune_first(p, std::move(choice)));
    }
    SSMTUNE_ASSIGN_OR_RETURN(
        FwdKernel k,
        build_fwd_kernel(*compiler, p, choice.config, device.arch(), device.max_shared_per_block));
    std::unique_lock<std::shared_mutex> lock(kernels_mu);
    auto [it, inserted] =
        kernels.emplace(key, Entry{choice, std::make_shared<FwdKernel>(std::move(k))});
    return &it->second;
  }

  // Tunes `p` in a child process, then selects again; a failed tune keeps
  // the earlier choice and says why in its reason.
  Result<ConfigChoice> tune_first(const FwdProblem& p, ConfigChoice before) {
    const auto argv = first_use_tune_argv(tuner_executable(), p.key(), db_path, tune_budget_s);
    auto wall = run_first_use_tune(argv, tune_budget_s);
    if (!wall) {
      before.reason += "; tune on first use failed: " + wall.status().message();
      return before;
    }
    SSMTUNE_ASSIGN_OR_RETURN(ConfigChoice after, choose(p));
    char note[96];
    std::snprintf(note, sizeof note, " (tuned on first use in %.1f s)", *wall);
    after.reason += note;
    return after;
  }

  FwdScratch& scratch_for(void* stream) {
    std::lock_guard<std::mutex> lock(scratch_mu);
    auto& s = scratch[stream];
    if (!s) s = std::make_unique<FwdScratch>();
    return *s;
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
    auto c = FwdConfig::from_key(f);
    if (!c) return Status::invalid_argument("$SSMTUNE_FORCE_CONFIG: " + c.status().message());
    impl->forced = *c;
  }
  if (o.use_db) {
    const std::string path = cache::resolve_db_path(o.db_path);
    impl->db_path = path;
    auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
    std::error_code ec;
    if (!db && db.status().code() == Code::kIoError && std::filesystem::exists(path, ec)) {
      // A shared database this process cannot write (read-only file or
      // directory): read it, and keep compiled cubins in memory.
      SSMTUNE_ASSIGN_OR_RETURN(cache::TuningDb ro,
                               cache::TuningDb::open(path, cache::OpenMode::kReadOnly));
      impl->db = std::make_unique<cache::TuningDb>(std::move(ro));
      impl->cubins = std::make_unique<jit::MemoryCubinCache>();
    } else {
      if (!db) return db.status();
      impl->db = std::make_unique<cache::TuningDb>(std::move(*db));
      SSMTUNE_ASSIGN_OR_RETURN(auto cubins, cache::SqliteCubinCache::open(path));
      impl->cubins = std::move(cubins);
    }
  } else {
    impl->cubins = std::make_unique<jit::MemoryCubinCache>();
  }
  impl->compiler = std::make_unique<jit::Compiler>(std::move(sources), impl->cubins.get(), 1);
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

Status Runtime::selective_scan_fwd(const ssmtune_fwd_args& args, void* stream) {
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_call(args));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_ASSIGN_OR_RETURN(const Impl::Entry* e, impl_->entry_for(call.problem));
  return e->kernel->launch(make_params(call.problem, call.tensors), static_cast<CUstream>(stream),
                           impl_->scratch_for(stream));
}

Result<const PreparedCall*> Runtime::prepare_fwd(const ssmtune_fwd_args& layout) {
  std::vector<int64_t> key = layout_key(layout);
  {
    std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
    auto it = impl_->plans.find(key);
    if (it != impl_->plans.end()) return it->second.get();
  }
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_layout(layout));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  SSMTUNE_ASSIGN_OR_RETURN(const Impl::Entry* e, impl_->entry_for(call.problem));
  auto prepared = std::make_unique<PreparedCall>(this, std::move(call), e->choice, e->kernel);
  std::unique_lock<std::shared_mutex> lock(impl_->plans_mu);
  auto [it, inserted] = impl_->plans.emplace(std::move(key), std::move(prepared));
  return it->second.get();  // a racing thread's equal plan wins; ours is dropped
}

Status Runtime::launch_fwd(const PreparedCall& call, const void* const* ptrs, void* scratch,
                           void* stream) {
  if (call.owner() != this)
    return Status::invalid_argument("the prepared call belongs to another runtime");
  SSMTUNE_ASSIGN_OR_RETURN(ssmtune_kernels::SsmFwdParams params, call.bind(ptrs));
  SSMTUNE_RETURN_IF_ERROR(impl_->context.make_current());
  const auto s = static_cast<CUstream>(stream);
  if (call.scratch_bytes() == 0) return call.kernel().launch_on(params, s, 0, 0);
  if (scratch == nullptr) return call.kernel().launch(params, s, impl_->scratch_for(stream));
  if (reinterpret_cast<uintptr_t>(scratch) % 256 != 0)
    return Status::invalid_argument("scratch: pointer is not aligned to 256 bytes");
  const auto base = reinterpret_cast<CUdeviceptr>(scratch);
  return call.kernel().launch_on(params, s, base, base + call.flags_offset());
}

std::string Runtime::explain(const PreparedCall& call) {
  const ConfigChoice& c = call.choice();
  return call.problem().key() + ": " + c.config.key() + " [" + to_string(c.rule) + ", in use] " +
         c.reason;
}

Result<std::string> Runtime::explain(const ssmtune_fwd_args& args) {
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_call(args));
  std::optional<ConfigChoice> in_use;
  {
    std::shared_lock<std::shared_mutex> lock(impl_->kernels_mu);
    auto it = impl_->kernels.find(Impl::id_of(call.problem));
    if (it != impl_->kernels.end()) in_use = it->second.choice;
  }
  if (in_use)  // what this process runs, which may predate newer database entries
    return call.problem.key() + ": " + in_use->config.key() + " [" + to_string(in_use->rule) +
           ", in use] " + in_use->reason;
  SSMTUNE_ASSIGN_OR_RETURN(ConfigChoice c, impl_->choose(call.problem));
  return call.problem.key() + ": " + c.config.key() + " [" + to_string(c.rule) + "] " + c.reason;
}

}  // namespace ssmtune
