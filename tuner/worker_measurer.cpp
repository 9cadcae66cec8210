// The worker-process measurer.
#include "tuner/worker_measurer.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "tuner/records_json.h"

namespace ssmtune {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

nlohmann::json to_json(const jit::DeviceInfo& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"uuid", d.uuid},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"total_memory", d.total_memory},
          {"sm_clock_khz", d.sm_clock_khz},
          {"memory_clock_khz", d.memory_clock_khz},
          {"memory_bus_bits", d.memory_bus_bits},
          {"l2_bytes", d.l2_bytes},
          {"max_shared_per_block", d.max_shared_per_block},
          {"max_shared_per_sm", d.max_shared_per_sm},
          {"registers_per_sm", d.registers_per_sm},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_threads_per_block", d.max_threads_per_block},
          {"driver_version", d.driver_version},
          {"nvrtc_version", d.nvrtc_version}};
}

jit::DeviceInfo device_from_json(const nlohmann::json& j) {
  jit::DeviceInfo d;
  d.ordinal = j.value("ordinal", 0);
  d.name = j.value("name", "");
  d.uuid = j.value("uuid", "");
  d.cc_major = j.value("cc_major", 0);
  d.cc_minor = j.value("cc_minor", 0);
  d.sm_count = j.value("sm_count", 0);
  d.total_memory = j.value("total_memory", size_t{0});
  d.sm_clock_khz = j.value("sm_clock_khz", 0);
  d.memory_clock_khz = j.value("memory_clock_khz", 0);
  d.memory_bus_bits = j.value("memory_bus_bits", 0);
  d.l2_bytes = j.value("l2_bytes", 0);
  d.max_shared_per_block = j.value("max_shared_per_block", 0);
  d.max_shared_per_sm = j.value("max_shared_per_sm", 0);
  d.registers_per_sm = j.value("registers_per_sm", 0);
  d.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  d.max_threads_per_block = j.value("max_threads_per_block", 0);
  d.driver_version = j.value("driver_version", 0);
  d.nvrtc_version = j.value("nvrtc_version", "");
  return d;
}

Result<std::string> find_worker_exe() {
  if (const char* e = std::getenv("SSMTUNE_EXE"); e != nullptr && *e != '\0') {
    if (is_executable(e)) return std::string(e);
    return Status::not_found(std::string("SSMTUNE_EXE='") + e + "' is not an executable file");
  }
  std::vector<std::string> tried;
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) tried.push_back(dir_of(std::string(buf, static_cast<size_t>(n))) + "ssmtune");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&find_worker_exe), &info) != 0 && info.dli_fname != nullptr &&
      std::string(info.dli_fname).find('/') != std::string::npos)
    tried.push_back(dir_of(info.dli_fname) + "ssmtune");
  for (const auto& t : tried)
    if (is_executable(t)) return t;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      const size_t end = p.find(':', start);
      const std::string dir = p.substr(start, end == std::string::npos ? end : end - start);
      if (!dir.empty() && is_executable(dir + "/ssmtune")) return dir + "/ssmtune";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  std::string where;
  for (const auto& t : tried) where += t + ", ";
  return Status::not_found("the ssmtune program (the tuning worker) was not found (looked at " +
                           where + "and PATH); set SSMTUNE_EXE");
}

Status WorkerMeasurer::spawn() {
  std::vector<std::string> argv = {o_.exe,      "worker",
                                   "--problem", problem_,
                                   "--seed",    std::to_string(o_.seed),
                                   "--gpu",     std::to_string(o_.gpu)};
  if (!o_.db_path.empty()) {
    argv.push_back("--db");
    argv.push_back(o_.db_path);
  }
  if (o_.max_error > 0) {
    argv.push_back("--max-error");
    argv.push_back(std::to_string(o_.max_error));
  }
  for (const auto& a : o_.extra_args) argv.push_back(a);
  SSMTUNE_ASSIGN_OR_RETURN(WorkerClient w, WorkerClient::spawn(argv));
  // The greeting comes after the inputs and the fp64 reference are ready.
  SSMTUNE_ASSIGN_OR_RETURN(nlohmann::json hello, w.read(600));
  if (hello.contains("error") && hello["error"].is_string())
    return Status::cuda_error(hello["error"].get<std::string>()).with_context("worker");
  if (!hello.contains("device") || !hello["device"].is_object())
    return Status::internal("worker: greeting without a device: " + hello.dump());
  MeasurerInfo info;
  info.device = device_from_json(hello["device"]);
  info.template_hash = hello.value("template_hash", "");
  info.seed = hello.value("seed", uint64_t{0});
  info.reference = hello.value("reference", "");
  // Later workers keep the first one's seed, so every config sees the same inputs.
  if (o_.seed == 0) o_.seed = info.seed;
  info_ = info;
  worker_ = std::move(w);
  return Status::ok();
}

Result<MeasurerInfo> WorkerMeasurer::start(const std::string& problem_key) {
  worker_.reset();
  problem_ = problem_key;
  SSMTUNE_RETURN_IF_ERROR(spawn());
  return *info_;
}

Measurement WorkerMeasurer::measure(const std::string& config, double target_ms) {
  Measurement m;
  m.problem_key = problem_;
  m.config_key = config;
  Status s = worker_ ? Status::ok() : spawn();
  nlohmann::json reply;
  if (s) s = worker_->send({{"config", config}, {"target_ms", target_ms}});
  if (s) {
    auto r = worker_->read(o_.timeout_s);
    if (r) {
      reply = *r;
    } else {
      s = r.status();
    }
  }
  if (s && reply.contains("error")) s = Status::internal(reply["error"].dump());
  if (s) s = measurement_from_json(reply, "worker reply", m, {"status"});
  if (!s) {
    m = Measurement{};
    m.problem_key = problem_;
    m.config_key = config;
    m.status = MeasureStatus::kFaulted;
    m.detail = s.to_string();
  }
  // After a fault the context may hold a sticky error: a fresh worker next.
  if (m.status == MeasureStatus::kFaulted) worker_.reset();
  return m;
}

}  // namespace ssmtune
