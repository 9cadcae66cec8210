// Spreading shapes over GPUs with stand-in runners: every task runs exactly
// once, the work spreads over the GPUs (a slow GPU takes fewer), a failing
// GPU's task is reported and the others finish the queue, tasks left when
// every GPU stopped are reported as not run, and results written by every
// GPU's own connection land in one database.
#include "tuner/multi_gpu_schedule.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cache/db_fixtures.h"
#include "cache/tuning_db.h"

namespace ssmtune {
namespace {

using std::chrono::milliseconds;

TEST_CASE("every task runs exactly once, spread over the GPUs", "[tuner][gpus]") {
  const std::vector<int> gpus{0, 2, 5};
  const size_t n = 23;
  std::mutex mu;
  std::map<size_t, int> runs;  // task -> times run
  std::map<int, int> per_gpu;
  std::vector<size_t> done_order;
  auto make = [&](int gpu) -> Result<GpuTaskRunner> {
    return GpuTaskRunner([&, gpu](size_t i) {
      std::this_thread::sleep_for(milliseconds(gpu == 5 ? 9 : 3));  // GPU 5 is slow
      std::lock_guard<std::mutex> lock(mu);
      ++runs[i];
      ++per_gpu[gpu];
      return Status::ok();
    });
  };
  const ScheduleReport r =
      run_on_gpus(gpus, n, make, [&](const TaskOutcome& t) { done_order.push_back(t.index); });
  REQUIRE(r.tasks.size() == n);
  CHECK(runs.size() == n);
  for (const auto& [task, count] : runs) CHECK(count == 1);
  CHECK(done_order.size() == n);
  CHECK(r.failed() == 0);
  CHECK(r.not_run() == 0);
  CHECK(r.first_error().is_ok());
  for (size_t i = 0; i < n; ++i) {
    CHECK(r.tasks[i].index == i);
    CHECK(r.tasks[i].ran);
    CHECK(std::set<int>{0, 2, 5}.count(r.tasks[i].gpu) == 1);
    CHECK(r.tasks[i].wall_s > 0);
  }
  // Every GPU took work; the slow one fewer than the fast ones.
  for (int g : gpus) CHECK(per_gpu[g] >= 1);
  CHECK(per_gpu[5] < per_gpu[0] + per_gpu[2]);
}

TEST_CASE("a failing GPU's task is reported and the other GPUs finish the queue", "[tuner][gpus]") {
  std::atomic<int> ran_on_1{0};
  auto make = [&](int gpu) -> Result<GpuTaskRunner> {
    return GpuTaskRunner([&, gpu](size_t) {
      std::this_thread::sleep_for(milliseconds(2));
      if (gpu == 1) {
        ++ran_on_1;
        return Status::cuda_error("CUDA_ERROR_ECC_UNCORRECTABLE on GPU 1");
      }
      return Status::ok();
    });
  };
  const ScheduleReport r = run_on_gpus({0, 1}, 12, make);
  CHECK(ran_on_1 == 1);  // it stopped after its failure
  CHECK(r.failed() == 1);
  CHECK(r.not_run() == 0);
  int ok = 0;
  for (const auto& t : r.tasks) {
    if (t.gpu == 1) {
      CHECK(t.status.code() == Code::kCudaError);
    } else {
      CHECK(t.gpu == 0);
      ok += t.status.is_ok();
    }
  }
  CHECK(ok == 11);
  CHECK(r.first_error().message().find("ECC") != std::string::npos);
}

TEST_CASE("tasks are reported as not run when every GPU stopped; a GPU that cannot start is named",
          "[tuner][gpus]") {
  auto make = [&](int gpu) -> Result<GpuTaskRunner> {
    if (gpu == 3) return Status::no_driver("GPU 3 fell off the bus");
    return GpuTaskRunner([](size_t) { return Status::timeout("worker hung"); });
  };
  std::vector<TaskOutcome> finished;
  const ScheduleReport r =
      run_on_gpus({0, 3}, 5, make, [&](const TaskOutcome& t) { finished.push_back(t); });
  REQUIRE(r.gpu_errors.size() == 1);
  CHECK(r.gpu_errors[0].find("GPU 3") != std::string::npos);
  CHECK(r.gpu_errors[0].find("fell off the bus") != std::string::npos);
  CHECK(r.failed() == 1);  // GPU 0 failed its first task and stopped
  CHECK(r.not_run() == 4);
  CHECK(finished.size() == 1);
  for (const auto& t : r.tasks)
    if (!t.ran) CHECK(t.status.message().find("not run") != std::string::npos);
  CHECK(r.first_error().code() == Code::kTimeout);

  const ScheduleReport nobody = run_on_gpus({}, 2, make);
  CHECK(nobody.not_run() == 2);
  CHECK_FALSE(nobody.first_error().is_ok());
  const ScheduleReport empty = run_on_gpus({0}, 0, make);
  CHECK(empty.tasks.empty());
  CHECK(empty.first_error().is_ok());
}

TEST_CASE("every GPU writes its results through its own connection into one database",
          "[tuner][gpus]") {
  testing::TempDir dir;
  const std::string path = dir.file("fleet.db");
  const std::vector<int> gpus{0, 1, 2, 3};
  {
    auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
    REQUIRE(db.is_ok());
    for (int g : gpus) {
      DeviceRecord d = testing::sample_device(0);
      d.uuid = "GPU-0000000" + std::to_string(g) + "-aaaa-bbbb-cccc-dddddddddddd";
      REQUIRE(db->upsert_device(d).is_ok());
    }
  }
  const size_t n = 14;
  auto make = [&](int gpu) -> Result<GpuTaskRunner> {
    auto db = cache::TuningDb::open(path, cache::OpenMode::kReadWrite);
    if (!db) return db.status();
    auto conn = std::make_shared<cache::TuningDb>(std::move(*db));
    return GpuTaskRunner([conn, gpu](size_t i) {
      const std::string uuid = "GPU-0000000" + std::to_string(gpu) + "-aaaa-bbbb-cccc-dddddddddddd";
      const std::string problem = testing::problem_key(static_cast<int>(i));
      SSMTUNE_RETURN_IF_ERROR(conn->add_measurement(
          testing::sample_measurement(uuid, problem, testing::config_key(1), 0.1 + 0.01 * i)));
      return conn->set_best(testing::sample_best(uuid, problem, testing::config_key(1)));
    });
  };
  const ScheduleReport r = run_on_gpus(gpus, n, make);
  INFO(r.first_error().to_string());
  REQUIRE(r.first_error().is_ok());
  auto db = cache::TuningDb::open(path, cache::OpenMode::kReadOnly);
  REQUIRE(db.is_ok());
  auto best = db->list_best(testing::sample_versions());
  REQUIRE(best.is_ok());
  CHECK(best->size() == n);
  std::set<std::string> problems;
  for (const auto& b : *best) problems.insert(b.problem_key);
  CHECK(problems.size() == n);
  auto ms = db->measurements();
  REQUIRE(ms.is_ok());
  CHECK(ms->size() == n);
  REQUIRE(db->check_integrity().is_ok());
}

}  // namespace
}  // namespace ssmtune
