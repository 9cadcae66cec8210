// Spreading tasks (the shapes of a tune's list) over several GPUs: one
// thread per GPU, each with its own runner (its worker process, context,
// database connection and compiler), taking the next task from one shared
// queue when it finishes one. Nothing here touches a GPU: the runners are
// given, so tests use stand-ins. Thread-safe as described per function.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ssmtune/status.h"

namespace ssmtune {

// One GPU's runner: runs task `index` to its end on that GPU. Called on the
// GPU's own thread only, one task at a time.
using GpuTaskRunner = std::function<Status(size_t index)>;
// Makes GPU `gpu`'s runner, on that GPU's thread (per-thread state lives in
// what it captures). An error leaves the GPU out of the schedule.
using MakeGpuRunner = std::function<Result<GpuTaskRunner>(int gpu)>;

struct TaskOutcome {
  size_t index = 0;
  bool ran = false;  // false: no GPU was left to run it (status says why)
  int gpu = -1;      // the GPU that ran it
  Status status;     // the runner's result, or why it did not run
  double wall_s = 0;
};

struct ScheduleReport {
  std::vector<TaskOutcome> tasks;  // one per task, by index
  // GPUs whose runner could not be made, with why ("GPU 1: ...").
  std::vector<std::string> gpu_errors;
  int failed() const;   // tasks that ran and failed
  int not_run() const;  // tasks no GPU ran
  // The first failure (a failed task, else a GPU that could not start,
  // else a task not run); ok when every task succeeded.
  Status first_error() const;
};

// Runs tasks 0..task_count-1 over `gpus` (distinct ordinals), each exactly
// once. A GPU whose runner fails a task stops taking tasks (its failure is
// in that task's outcome); tasks left when every GPU has stopped are
// reported as not run, never dropped. `on_done` (may be empty) is called
// for each finished task, serialized, as it finishes.
ScheduleReport run_on_gpus(const std::vector<int>& gpus, size_t task_count,
                           const MakeGpuRunner& make_runner,
                           const std::function<void(const TaskOutcome&)>& on_done = {});

}  // namespace ssmtune
