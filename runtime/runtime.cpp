// The library runtime: selection, per-process kernel memo, launch.
#include "ssmtune/runtime.h"

#include <map>
#include <mutex>
#include <shared_mutex>

#include "cache/db_path.h"
#include "cache/sqlite_cubin_cache.h"
#include "cache/tuning_db.h"
#include "jit/compiler.h"
#include "jit/device.h"
#include "runtime/call_args.h"
#include "runtime/selector.h"
#include "tuner/fwd_runner.h"

namespace ssmtune {

struct Runtime::Impl {
  jit::Context context;
  jit::DeviceInfo device;
  std::unique_ptr<cache::TuningDb> db;  // selection; guarded by db_mu
  std::unique_ptr<jit::CubinCache> cubins;
  std::unique_ptr<jit::Compiler> compiler;
  cache::Versions versions;
  std::mutex db_mu;

  struct Entry {
    ConfigChoice choice;
    std::shared_ptr<FwdKernel> kernel;
  };
  std::shared_mutex kernels_mu;
  std::map<std::string, Entry> kernels;  // by problem key
  std::mutex compile_mu;                 // one compilation at a time per runtime

  std::mutex scratch_mu;
  std::map<void*, std::unique_ptr<FwdScratch>> scratch;  // per stream

  Impl(jit::Context c, jit::DeviceInfo d) : context(std::move(c)), device(std::move(d)) {}

  Result<ConfigChoice> choose(const Problem& p) {
    std::lock_guard<std::mutex> lock(db_mu);
    return choose_config(db.get(), device, versions, p);
  }

  Result<const Entry*> entry_for(const Problem& p) {
    const std::string key = p.key();
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
    SSMTUNE_ASSIGN_OR_RETURN(
        FwdKernel k,
        build_fwd_kernel(*compiler, p, choice.config, device.arch(), device.max_shared_per_block));
    std::unique_lock<std::shared_mutex> lock(kernels_mu);
    auto [it, inserted] =
        kernels.emplace(key, Entry{choice, std::make_shared<FwdKernel>(std::move(k))});
    return &it->second;
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
  if (o.use_db) {
    const std::string path = cache::resolve_db_path(o.db_path);
    SSMTUNE_ASSIGN_OR_RETURN(cache::TuningDb db,
                             cache::TuningDb::open(path, cache::OpenMode::kReadWrite));
    impl->db = std::make_unique<cache::TuningDb>(std::move(db));
    SSMTUNE_ASSIGN_OR_RETURN(auto cubins, cache::SqliteCubinCache::open(path));
    impl->cubins = std::move(cubins);
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

Result<std::string> Runtime::explain(const ssmtune_fwd_args& args) {
  SSMTUNE_ASSIGN_OR_RETURN(CallProblem call, read_call(args));
  SSMTUNE_ASSIGN_OR_RETURN(ConfigChoice c, impl_->choose(call.problem));
  return call.problem.key() + ": " + c.config.key() + " [" + to_string(c.rule) + "] " + c.reason;
}

}  // namespace ssmtune
