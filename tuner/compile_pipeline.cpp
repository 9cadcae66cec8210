// The compile-while-measuring pipeline.
#include "tuner/compile_pipeline.h"

#include <chrono>

#include "core/scope_exit.h"

namespace ssmtune {

CompilePipeline::CompilePipeline(std::vector<PipelineItem> items, PipelineHooks hooks,
                                 unsigned threads, double deadline)
    : hooks_(std::move(hooks)), deadline_(deadline) {
  if (!hooks_.clock)
    hooks_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  slots_.reserve(items.size());
  for (auto& it : items) {
    Slot s;
    s.config = std::move(it.config);
    s.spec = std::move(it.spec);
    s.state = s.spec ? State::kQueued : State::kReady;
    if (s.spec && counts_.to_compile++ == 0) first_spec_ = slots_.size();
    slots_.push_back(std::move(s));
  }
  counts_.finished = counts_.to_compile == 0;
  if (counts_.to_compile == 0) return;
  pool_ = std::make_unique<ThreadPool>(threads);
  // In the given order: the pool runs its queue first in, first out.
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].spec) pool_->submit([this, i] { compile_one(i); });
}

CompilePipeline::~CompilePipeline() {
  close();
  pool_.reset();  // queued tasks skip at once; those in flight finish
}

void CompilePipeline::compile_one(size_t i) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot& s = slots_[i];
  // Skipped: closed, or the typical compile would end past the deadline
  // (never the first: a session measures at least its default).
  const double typical = counts_.compiled > 0 ? counts_.compile_s / counts_.compiled : 0;
  if (closed_ || (deadline_ > 0 && i != first_spec_ && now() + typical > deadline_)) {
    s.state = State::kSkipped;
    ++counts_.skipped;
    counts_.finished = counts_.compiled + counts_.skipped == counts_.to_compile;
    cv_.notify_all();
    return;
  }
  s.state = State::kCompiling;
  const jit::ProgramSpec spec = *s.spec;
  const std::string config = s.config;
  lock.unlock();

  const double t0 = now();
  auto program = hooks_.compile(spec);
  const double dt = now() - t0;
  std::string why;
  int rank = 0;
  if (program) {
    if (hooks_.prune) why = hooks_.prune(config, *program);
    if (why.empty() && hooks_.rank) rank = hooks_.rank(config, *program);
  }

  lock.lock();
  ++counts_.compiled;
  counts_.compile_s += dt;
  if (!program) {
    ++counts_.failed;
    s.state = State::kDropped;
    dropped_.push_back({config, true, program.status().message().substr(0, 2000)});
  } else if (!why.empty()) {
    ++counts_.pruned;
    s.state = State::kDropped;
    dropped_.push_back({config, false, why});
  } else {
    s.state = State::kReady;
    s.rank = rank;
  }
  counts_.finished = counts_.compiled + counts_.skipped == counts_.to_compile;
  cv_.notify_all();
}

bool CompilePipeline::pending_locked() const {
  for (const Slot& s : slots_)
    if (s.state == State::kQueued || s.state == State::kCompiling) return true;
  return false;
}

std::optional<std::string> CompilePipeline::next(const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  const double entered = now();
  // The time spent here, on every return (mu_ held then).
  const ScopeExit waited([this, entered] { counts_.waited_s += now() - entered; });
  for (;;) {
    // The first item (the default) leads; then the earliest ready config of
    // the lowest rank.
    Slot* pick = nullptr;
    const bool lead_waits = !slots_.empty() && (slots_[0].state == State::kQueued ||
                                                slots_[0].state == State::kCompiling);
    if (!slots_.empty() && slots_[0].state == State::kReady) pick = &slots_[0];
    if (pick == nullptr && !lead_waits)
      for (Slot& s : slots_)
        if (s.state == State::kReady && (pick == nullptr || s.rank < pick->rank)) pick = &s;
    if (pick != nullptr) {
      pick->state = State::kTaken;
      ++counts_.handed_out;
      return pick->config;
    }
    if (!pending_locked()) return std::nullopt;
    cv_.wait_for(lock, std::chrono::milliseconds(20));
    lock.unlock();
    const bool stop = give_up && give_up();
    lock.lock();
    if (stop) return std::nullopt;
  }
}

void CompilePipeline::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
}

void CompilePipeline::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return counts_.finished; });
}

std::vector<CompileDrop> CompilePipeline::take_dropped() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CompileDrop> out;
  out.swap(dropped_);
  return out;
}

PipelineCounts CompilePipeline::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace ssmtune
