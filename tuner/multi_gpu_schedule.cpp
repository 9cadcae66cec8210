// The shared queue over GPU threads.
#include "tuner/multi_gpu_schedule.h"

#include <chrono>
#include <mutex>
#include <thread>

namespace ssmtune {

int ScheduleReport::failed() const {
  int n = 0;
  for (const auto& t : tasks) n += t.ran && !t.status.is_ok();
  return n;
}

int ScheduleReport::not_run() const {
  int n = 0;
  for (const auto& t : tasks) n += !t.ran;
  return n;
}

Status ScheduleReport::first_error() const {
  for (const auto& t : tasks)
    if (t.ran && !t.status.is_ok()) return t.status;
  if (!gpu_errors.empty()) return Status::internal(gpu_errors.front());
  for (const auto& t : tasks)
    if (!t.ran) return t.status;
  return Status::ok();
}

ScheduleReport run_on_gpus(const std::vector<int>& gpus, size_t task_count,
                           const MakeGpuRunner& make_runner,
                           const std::function<void(const TaskOutcome&)>& on_done) {
  ScheduleReport report;
  report.tasks.resize(task_count);
  for (size_t i = 0; i < task_count; ++i) report.tasks[i].index = i;
  std::mutex mu;  // guards next, report, on_done
  size_t next = 0;
  auto gpu_thread = [&](int gpu) {
    auto runner = make_runner(gpu);
    if (!runner) {
      std::lock_guard<std::mutex> lock(mu);
      report.gpu_errors.push_back("GPU " + std::to_string(gpu) + ": " +
                                  runner.status().to_string());
      return;
    }
    for (;;) {
      size_t index;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= task_count) return;
        index = next++;
      }
      const auto start = std::chrono::steady_clock::now();
      Status s = (*runner)(index);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard<std::mutex> lock(mu);
      TaskOutcome& t = report.tasks[index];
      t.ran = true;
      t.gpu = gpu;
      t.status = std::move(s);
      t.wall_s = wall;
      if (on_done) on_done(t);
      if (!t.status.is_ok()) return;  // this GPU stops; the others go on
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(gpus.size());
  for (int gpu : gpus) threads.emplace_back(gpu_thread, gpu);
  for (auto& t : threads) t.join();
  for (auto& t : report.tasks)
    if (!t.ran)
      t.status =
          Status::internal("not run: every GPU stopped after a failure (see the failures above)");
  return report;
}

}  // namespace ssmtune
