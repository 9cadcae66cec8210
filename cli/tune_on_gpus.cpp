// Per-GPU tuning state and the per-shape progress lines.
#include "cli/tune_on_gpus.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "cache/db_stack.h"
#include "cache/sqlite_cubin_cache.h"
#include "jit/compiler.h"
#include "jit/template_sources.h"

namespace ssmtune::cli {
namespace {

// What one GPU's thread owns: its database connections and its compiler.
struct GpuTuner {
  cache::DbStack db;
  std::unique_ptr<cache::SqliteCubinCache> cubins;
  std::unique_ptr<jit::Compiler> compiler;
};

Result<std::shared_ptr<GpuTuner>> open_gpu_tuner(const std::string& db_list,
                                                 unsigned compile_threads) {
  SSMTUNE_ASSIGN_OR_RETURN(const cache::DbPathList paths, cache::split_db_paths(db_list));
  SSMTUNE_ASSIGN_OR_RETURN(cache::DbStack db,
                           cache::DbStack::open(paths, cache::OpenMode::kReadWrite));
  SSMTUNE_ASSIGN_OR_RETURN(auto cubins, cache::SqliteCubinCache::open(db_list));
  SSMTUNE_ASSIGN_OR_RETURN(jit::TemplateSources sources, jit::TemplateSources::load_default());
  auto t = std::make_shared<GpuTuner>(GpuTuner{std::move(db), std::move(cubins), nullptr});
  t->compiler =
      std::make_unique<jit::Compiler>(std::move(sources), t->cubins.get(), compile_threads);
  return t;
}

}  // namespace

GpuTuneResult tune_on_gpus(const GpuTuneJob& job, const std::vector<int>& gpus) {
  const std::vector<ParsedProblem>& problems = *job.problems;
  GpuTuneResult out;
  out.reports.resize(problems.size());
  // The GPUs compile at once: share the cores.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      std::max(1u, cores / static_cast<unsigned>(std::max<size_t>(1, gpus.size())));
  auto make_runner = [&](int gpu) -> Result<GpuTaskRunner> {
    SSMTUNE_ASSIGN_OR_RETURN(auto tuner, open_gpu_tuner(job.db_list, threads));
    return GpuTaskRunner([&, tuner, gpu](size_t i) -> Status {
      const ParsedProblem& p = problems[i];
      WorkerOptions wo = job.worker;
      wo.gpu = gpu;
      TuneOptions o = job.options;
      o.gpu = gpu;
      WorkerMeasurer measurer(wo);
      auto say = [gpu](const TuneEvent& e) {
        if (e.message.empty()) return;
        std::fprintf(stderr, "[gpu %d] [tune %s] %s\n", gpu, e.problem.c_str(), e.message.c_str());
        std::fflush(stderr);
      };
      auto r = tune_problem(tuner->db, *tuner->compiler, measurer, *p.family, *p.problem, o, say);
      if (!r) return r.status().with_context(p.problem->key() + " on GPU " + std::to_string(gpu));
      for (const auto& d : r->defects)
        std::fprintf(stderr, "[gpu %d] [tune %s] DEFECT: %s\n", gpu, r->problem_key.c_str(),
                     d.c_str());
      out.reports[i] = std::move(*r);
      return Status::ok();
    });
  };
  size_t finished = 0;
  auto on_done = [&](const TaskOutcome& t) {
    ++finished;
    const std::string key = problems[t.index].problem->key();
    const auto& r = out.reports[t.index];
    std::string what;
    if (!t.status.is_ok()) {
      what = "FAILED: " + t.status.to_string() + " (GPU " + std::to_string(t.gpu) +
             " takes no more shapes)";
    } else if (r->already_tuned) {
      what = "already tuned: " + r->best_config;
    } else if (r->found) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.4g ms", r->best_ms);
      what = "best " + r->best_config + " (" + ms + ")";
    } else {
      what = "no usable config";
    }
    std::fprintf(stderr, "[gpu %d] %s done in %.1f s (%zu of %zu): %s\n", t.gpu, key.c_str(),
                 t.wall_s, finished, problems.size(), what.c_str());
    std::fflush(stderr);
  };
  out.schedule = run_on_gpus(gpus, problems.size(), make_runner, on_done);
  for (const auto& e : out.schedule.gpu_errors)
    std::fprintf(stderr, "ssmtune tune: %s (that GPU took no shapes)\n", e.c_str());
  return out;
}

}  // namespace ssmtune::cli
