// `ssmtune compile`: JIT-compiles a kernel family for an arch (no GPU
// needed) and prints each instantiation's resource report and compile time.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/problem_options.h"
#include "cli/table.h"
#include "jit/compiler.h"
#include "jit/program_builder.h"
#include "tuner/fwd/family.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"
#include "tuner/records.h"

namespace ssmtune::cli {
namespace {

// Shared memory a block may take on the reference target (sm_90's opt-in
// maximum); compiling needs no device to ask.
constexpr size_t kCompileSharedBytes = size_t{227} * 1024;

struct CompileArgs {
  std::string arch = "sm_90";
  size_t per_program = 0;
  unsigned threads = 0;
  std::string format = "table";
  std::vector<std::string> configs;
  std::string cubin_dir;
  const CLI::Option* cubin_dir_opt = nullptr;  // to tell --cubin-dir "" from none
  ProblemArgs problem;
};

// --cubin-dir: an existing directory this process can write to.
Status check_cubin_dir(const CompileArgs& a) {
  if (a.cubin_dir_opt == nullptr || a.cubin_dir_opt->count() == 0) return Status::ok();
  if (a.cubin_dir.empty()) return Status::invalid_argument("--cubin-dir needs a directory");
  struct stat st;
  if (::stat(a.cubin_dir.c_str(), &st) != 0) {
    const int e = errno;
    const std::string msg = "--cubin-dir " + a.cubin_dir + ": " + std::strerror(e);
    return e == ENOENT ? Status::not_found(msg) : Status::io_error(msg);
  }
  if (!S_ISDIR(st.st_mode))
    return Status::invalid_argument("--cubin-dir " + a.cubin_dir + " is not a directory");
  if (::access(a.cubin_dir.c_str(), W_OK | X_OK) != 0)
    return Status::io_error("--cubin-dir " + a.cubin_dir + ": " + std::strerror(errno));
  return Status::ok();
}

// The given configs of the problem's family; without configs, for the
// forward every algorithm x accumulation dtype at its default config for
// the problem (default (8, 1536, 2048, 16) fp32) plus the fp64 reference,
// for other families their heuristic default.
Result<std::vector<jit::Instantiation>> family_instantiations(const CompileArgs& a) {
  SSMTUNE_ASSIGN_OR_RETURN(ParsedProblem pp, a.problem.any_problem());
  jit::DeviceInfo device;  // the target as NVRTC sees it: arch and the opt-in shared memory
  device.cc_major = std::stoi(a.arch.substr(3)) / 10;
  device.cc_minor = std::stoi(a.arch.substr(3)) % 10;
  device.max_shared_per_block = kCompileSharedBytes;
  std::vector<std::string> configs;
  for (const auto& key : a.configs) {
    SSMTUNE_ASSIGN_OR_RETURN(std::string c, pp.family->canonical_config(key));
    configs.push_back(c);
  }
  std::vector<jit::Instantiation> out;
  const FwdProblem* fwd = as_fwd(*pp.problem);
  if (configs.empty() && fwd != nullptr) {
    for (ScanAlgo algo : kAllScanAlgos)
      for (AccType acc : {AccType::kF32, AccType::kF64})
        configs.push_back(default_config(*fwd, algo, acc, kCompileSharedBytes).key());
  } else if (configs.empty()) {
    configs.push_back(pp.family->heuristic_default(*pp.problem, device).config);
  }
  for (const auto& c : configs) {
    SSMTUNE_RETURN_IF_ERROR(pp.family->check_config(*pp.problem, c, device));
    SSMTUNE_ASSIGN_OR_RETURN(auto inst, pp.family->instantiations(*pp.problem, c, device));
    out.insert(out.end(), inst.begin(), inst.end());
  }
  if (a.configs.empty() && fwd != nullptr) out.push_back(reference_instantiation(fwd->dtype));
  return out;
}

// Writes program NAME's cubin to DIR/NAME.cubin, less NAME's ".cu" (for
// cuobjdump / nvdisasm).
Status write_cubin(const std::string& dir, std::string name, const std::string& cubin) {
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".cu") == 0) name.resize(name.size() - 3);
  const std::string path = dir + "/" + name + ".cubin";
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::io_error("cannot write " + path + ": " + std::strerror(errno));
  const bool ok = std::fwrite(cubin.data(), 1, cubin.size(), f) == cubin.size();
  const int e = errno;
  if (std::fclose(f) != 0 || !ok)
    return Status::io_error("cannot write " + path + ": " + std::strerror(ok ? errno : e));
  return Status::ok();
}

void run(CompileArgs a) {
  auto fmt = parse_format(a.format);
  if (!report("compile", fmt.status())) return;
  if (!report("compile", jit::validate_arch(a.arch))) return;
  if (!report("compile", check_cubin_dir(a))) return;
  if (!a.problem.key.empty()) a.problem.family = family_of_key(a.problem.key);
  auto inst = family_instantiations(a);
  if (!report("compile", inst.status())) return;
  auto sources = jit::TemplateSources::load_default();
  if (!report("compile", sources.status())) return;

  jit::Compiler compiler(*sources, nullptr, a.threads);
  const auto specs = jit::make_programs(*inst, a.per_program, a.arch, a.problem.family);
  std::cerr << "compiling " << inst->size() << " instantiations of " << a.problem.family << " for "
            << a.arch << " in " << specs.size() << " NVRTC programs (NVRTC "
            << jit::nvrtc_version().to_string() << ")\n";
  const auto t0 = std::chrono::steady_clock::now();
  auto results = compiler.compile_all(specs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  Table t({"program", "instantiation", "registers", "spill_stores", "spill_loads", "smem_bytes",
           "stack_bytes", "program_compile_s"});
  double cpu = 0;
  bool ok = true;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      report("compile", results[i].status());
      ok = false;
      continue;
    }
    cpu += results[i]->compile_seconds;
    if (!a.cubin_dir.empty() &&
        !report("compile", write_cubin(a.cubin_dir, specs[i].name, results[i]->cubin)))
      ok = false;
    for (const auto& k : results[i]->kernels) {
      const auto& r = k.resources;
      t.add_row({specs[i].name, k.name_expression, r.registers, r.spill_store_bytes,
                 r.spill_load_bytes, r.shared_bytes, r.stack_frame_bytes,
                 results[i]->compile_seconds});
    }
  }
  t.print(std::cout, *fmt);
  std::cerr << "compiled " << t.rows() << " kernels: " << wall << " s wall, " << cpu
            << " s of NVRTC time, " << (t.rows() ? cpu / t.rows() : 0.0)
            << " s per instantiation\n";
  if (!ok) exit_code() = 1;
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compile",
      "JIT-compile a kernel family for an arch and print each kernel's resource report "
      "(no GPU needed)");
  auto a = std::make_shared<CompileArgs>();
  cmd->add_option("--arch", a->arch, "target, sm_XX")->capture_default_str();
  cmd->add_option("--per-program", a->per_program,
                  "instantiations per NVRTC program (0: all in one)")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads,
                  "parallel NVRTC compilations, 0 to 256 (0: one per core)")
      ->check(CLI::Range(0u, 256u))
      ->capture_default_str();
  cmd->add_option("--config", a->configs,
                  "compile these config keys of the problem's family (as `ssmtune db show` "
                  "prints them) instead of the defaults");
  a->cubin_dir_opt = cmd->add_option(
      "--cubin-dir", a->cubin_dir,
      "write each program's cubin to DIR/PROGRAM.cubin (an existing folder), e.g. fwd_0.cubin");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  add_problem_options(cmd, a->problem);
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
