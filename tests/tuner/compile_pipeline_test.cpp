// The compile pipeline with stand-in compiles (no NVRTC): configs are handed
// out as their compiles finish, in order, before the rest is compiled; the
// static rank puts ready configs of a worse rank last; failed and pruned
// compiles are dropped and reported; a close or the deadline leaves the
// compiles not started as skipped (not reached), never the first one.
#include "tuner/compile_pipeline.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ssmtune {
namespace {

// Compiles that wait for a gate to open, except for configs let through.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> started{0};
  void release() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [this] { return open; });
  }
};

jit::ProgramSpec spec_for(const std::string& config) {
  jit::ProgramSpec s;
  s.name = config;
  s.name_expressions = {config};
  return s;
}

std::vector<PipelineItem> items(const std::vector<std::string>& configs) {
  std::vector<PipelineItem> out;
  for (const auto& c : configs) out.push_back({c, spec_for(c)});
  return out;
}

Result<jit::CompiledProgram> program(const jit::ProgramSpec& spec) {
  jit::CompiledProgram p;
  p.key = spec.name;
  return p;
}

const auto kNever = [] { return false; };

TEST_CASE("pipeline: the first compiled config is handed out while the rest compile",
          "[tuner][pipeline]") {
  Gate gate;
  PipelineHooks h;
  h.compile = [&gate](const jit::ProgramSpec& s) {
    ++gate.started;
    if (s.name != "a") gate.wait();
    return program(s);
  };
  CompilePipeline p(items({"a", "b", "c", "d"}), h, 2);
  auto first = p.next(kNever);
  REQUIRE(first.has_value());
  CHECK(*first == "a");
  CHECK_FALSE(p.counts().finished);
  CHECK(p.counts().compiled == 1);
  // Nothing else is ready: a caller that gives up gets nothing.
  CHECK_FALSE(p.next([] { return true; }).has_value());
  gate.release();
  // Once all are ready, the order given.
  p.wait();
  std::vector<std::string> rest;
  while (auto c = p.next(kNever)) rest.push_back(*c);
  CHECK(rest == std::vector<std::string>{"b", "c", "d"});
  const PipelineCounts n = p.counts();
  CHECK(n.to_compile == 4);
  CHECK(n.compiled == 4);
  CHECK(n.handed_out == 4);
  CHECK(n.skipped == 0);
  CHECK(n.finished);
}

TEST_CASE("pipeline: the time next() waits for a compile is counted", "[tuner][pipeline]") {
  PipelineHooks h;
  h.compile = [](const jit::ProgramSpec& s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return program(s);
  };
  CompilePipeline p(items({"a"}), h, 1);
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(p.next(kNever).has_value());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const PipelineCounts n = p.counts();
  CHECK(n.waited_s >= 0.05);
  CHECK(n.waited_s <= took + 1e-3);
  // A config already compiled is handed out without waiting.
  CompilePipeline q(items({"b"}), h, 1);
  q.wait();
  REQUIRE(q.next(kNever).has_value());
  CHECK(q.counts().waited_s < 0.01);
}

TEST_CASE("pipeline: the first item leads even when others compile sooner", "[tuner][pipeline]") {
  Gate gate;
  PipelineHooks h;
  h.compile = [&gate](const jit::ProgramSpec& s) {
    if (s.name == "default") gate.wait();
    return program(s);
  };
  CompilePipeline p(items({"default", "b", "c"}), h, 2);
  // b and c are ready long before the default: still nothing until it is.
  while (p.counts().compiled < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK_FALSE(p.next([] { return true; }).has_value());
  gate.release();
  CHECK(*p.next(kNever) == "default");
  CHECK(*p.next(kNever) == "b");
  CHECK(*p.next(kNever) == "c");
}

TEST_CASE("pipeline: items without a program are ready at once", "[tuner][pipeline]") {
  PipelineHooks h;
  h.compile = program;
  std::vector<PipelineItem> list = {{"stored", std::nullopt}, {"x", spec_for("x")}};
  CompilePipeline p(std::move(list), h, 1);
  CHECK(*p.next(kNever) == "stored");
  CHECK(*p.next(kNever) == "x");
  CHECK_FALSE(p.next(kNever).has_value());
  CHECK(p.counts().to_compile == 1);
}

TEST_CASE("pipeline: a worse static rank waits behind ready configs of a better one",
          "[tuner][pipeline]") {
  PipelineHooks h;
  h.compile = program;
  h.rank = [](const std::string& c, const jit::CompiledProgram&) {
    return c == "b" ? 2 : c == "d" ? 1 : 0;
  };
  CompilePipeline p(items({"a", "b", "c", "d", "e"}), h, 1);
  p.wait();
  std::vector<std::string> got;
  while (auto c = p.next(kNever)) got.push_back(*c);
  CHECK(got == std::vector<std::string>{"a", "c", "e", "d", "b"});
}

TEST_CASE("pipeline: failed and pruned compiles are dropped and reported", "[tuner][pipeline]") {
  PipelineHooks h;
  h.compile = [](const jit::ProgramSpec& s) -> Result<jit::CompiledProgram> {
    if (s.name == "bad") return Status::internal("error: no such template");
    return program(s);
  };
  h.prune = [](const std::string& c, const jit::CompiledProgram&) {
    return c == "fat" ? std::string("spills 64 B") : std::string();
  };
  CompilePipeline p(items({"a", "bad", "fat", "b"}), h, 1);
  std::vector<std::string> got;
  while (auto c = p.next(kNever)) got.push_back(*c);
  CHECK(got == std::vector<std::string>{"a", "b"});
  p.wait();
  const auto dropped = p.take_dropped();
  REQUIRE(dropped.size() == 2);
  for (const auto& d : dropped) {
    if (d.config == "bad") {
      CHECK(d.failed);
      CHECK(d.detail.find("no such template") != std::string::npos);
    } else {
      CHECK(d.config == "fat");
      CHECK_FALSE(d.failed);
      CHECK(d.detail == "spills 64 B");
    }
  }
  CHECK(p.take_dropped().empty());
  const PipelineCounts n = p.counts();
  CHECK(n.compiled == 4);
  CHECK(n.failed == 1);
  CHECK(n.pruned == 1);
}

TEST_CASE("pipeline: after close the compiles not started are skipped", "[tuner][pipeline]") {
  Gate gate;
  PipelineHooks h;
  h.compile = [&gate](const jit::ProgramSpec& s) {
    ++gate.started;
    gate.wait();
    return program(s);
  };
  CompilePipeline p(items({"a", "b", "c", "d", "e"}), h, 1);
  while (gate.started.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  p.close();
  gate.release();
  p.wait();
  const PipelineCounts n = p.counts();
  CHECK(n.compiled == 1);
  CHECK(n.skipped == 4);
  CHECK(n.finished);
  CHECK(*p.next(kNever) == "a");
  CHECK_FALSE(p.next(kNever).has_value());
}

TEST_CASE("pipeline: compiles that would end past the deadline are skipped, never the first",
          "[tuner][pipeline]") {
  std::atomic<double> clock{100};  // already past the deadline
  PipelineHooks h;
  h.clock = [&clock] { return clock.load(); };
  h.compile = [&clock](const jit::ProgramSpec& s) {
    clock = clock + 6;
    return program(s);
  };
  {
    CompilePipeline p(items({"a", "b", "c"}), h, 1, 10);
    p.wait();
    CHECK(p.counts().compiled == 1);
    CHECK(p.counts().skipped == 2);
    CHECK(*p.next(kNever) == "a");
  }
  // Before the deadline: a compile starts while the typical one still ends in time.
  clock = 0;
  CompilePipeline p(items({"a", "b", "c", "d"}), h, 1, 13);
  p.wait();
  // a: 0 -> 6; b: 6 + 6 <= 13 -> 12; c: 12 + 6 > 13: skipped, and d.
  CHECK(p.counts().compiled == 2);
  CHECK(p.counts().skipped == 2);
}

}  // namespace
}  // namespace ssmtune
