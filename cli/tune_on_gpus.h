// `ssmtune tune --gpus`: the shapes of a tune spread over several GPUs, one
// `ssmtune worker` process (its own context) per GPU at a time, each GPU
// taking the next shape when it finishes one (tuner/multi_gpu_schedule.h),
// all writing to one database (each GPU thread on its own connection).
// Prints one line per finished shape naming its GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/family.h"
#include "tuner/multi_gpu_schedule.h"
#include "tuner/session.h"
#include "tuner/worker_measurer.h"

namespace ssmtune::cli {

struct GpuTuneJob {
  const std::vector<ParsedProblem>* problems = nullptr;
  std::string db_list;   // the database (list) every GPU opens
  TuneOptions options;   // gpu is set per GPU
  WorkerOptions worker;  // gpu is set per GPU
};

struct GpuTuneResult {
  ScheduleReport schedule;
  std::vector<std::optional<TuneReport>> reports;  // per problem; set when it ran and succeeded
};

GpuTuneResult tune_on_gpus(const GpuTuneJob& job, const std::vector<int>& gpus);

}  // namespace ssmtune::cli
