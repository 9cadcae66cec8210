// Compiling a tuning session's candidates while they are measured: each
// config's program goes to a pool of compile threads in the session's order;
// as its compile finishes, the config is pruned by its resource report or
// becomes ready, and next() hands out the first item (the default) first,
// then the earliest ready one (a config the static cost model ranks worse
// only when no better one is ready). A compile
// not started when the strategy closes the source, or that could not finish
// before the deadline, is skipped: not reached, not a failure (never the
// first one). Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "jit/compiler.h"
#include "tuner/strategy.h"

namespace ssmtune {

struct PipelineItem {
  std::string config;
  std::optional<jit::ProgramSpec> spec;  // none: ready at once (measured before, or no program)
};

// A config dropped after its compile, for the session to record.
struct CompileDrop {
  std::string config;
  bool failed = false;  // the compile failed; else pruned by its resources
  std::string detail;   // the compile error or the pruning reason
};

struct PipelineHooks {
  std::function<Result<jit::CompiledProgram>(const jit::ProgramSpec&)> compile;
  // Empty when the compiled kernels are fit to time; else why not. May be empty.
  std::function<std::string(const std::string&, const jit::CompiledProgram&)> prune;
  // The static cost model: 0 for most; ready configs of a lower rank go
  // first. May be empty.
  std::function<int(const std::string&, const jit::CompiledProgram&)> rank;
  std::function<double()> clock;  // seconds, monotonic; empty: the steady clock
};

struct PipelineCounts {
  int to_compile = 0;  // items with a program
  int compiled = 0;    // compiles finished, failed ones included
  int failed = 0;
  int pruned = 0;   // by their resources
  int skipped = 0;  // not reached: never started
  int handed_out = 0;
  bool finished = false;  // every compile finished or skipped
  double compile_s = 0;   // the sum of the compiles' wall times
  double waited_s = 0;    // next()'s time blocked with no compiled config to hand out
};

class CompilePipeline final : public CandidateSource {
 public:
  // `threads`: compile threads (0: one per hardware thread); `deadline`: on
  // hooks.clock, 0 for none.
  CompilePipeline(std::vector<PipelineItem> items, PipelineHooks hooks, unsigned threads = 0,
                  double deadline = 0);
  ~CompilePipeline() override;  // closes, then waits for the compiles in flight
  CompilePipeline(const CompilePipeline&) = delete;
  CompilePipeline& operator=(const CompilePipeline&) = delete;

  std::optional<std::string> next(const std::function<bool()>& give_up) override;
  void close() override;
  // Blocks until every compile has finished or been skipped.
  void wait();
  // The configs dropped since the last call.
  std::vector<CompileDrop> take_dropped();
  PipelineCounts counts() const;

 private:
  enum class State { kQueued, kCompiling, kReady, kDropped, kSkipped, kTaken };
  struct Slot {
    std::string config;
    std::optional<jit::ProgramSpec> spec;
    State state = State::kQueued;
    int rank = 0;
  };
  void compile_one(size_t i);
  bool pending_locked() const;
  double now() const { return hooks_.clock(); }

  PipelineHooks hooks_;
  double deadline_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  std::vector<CompileDrop> dropped_;
  PipelineCounts counts_;
  bool closed_ = false;
  size_t first_spec_ = 0;             // the first item with a program
  std::unique_ptr<ThreadPool> pool_;  // last: joined before the state goes
};

}  // namespace ssmtune
