// `ssmtune compile`: JIT-compiles a kernel family for an arch (no GPU
// needed) and prints each instantiation's resource report and compile time.
#include <chrono>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/problem_options.h"
#include "cli/table.h"
#include "jit/compiler.h"
#include "jit/program_builder.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/heuristics.h"

namespace ssmtune::cli {
namespace {

// Shared memory a block may take on the reference target (sm_90's opt-in
// maximum); compiling needs no device to ask.
constexpr size_t kCompileSharedBytes = 227 * 1024;

struct CompileArgs {
  std::string arch = "sm_90";
  std::string family = "linear_recurrence";
  size_t per_program = 0;
  unsigned threads = 0;
  std::string format = "table";
  std::vector<std::string> configs;
  std::string cubin_dir;
  ProblemArgs problem;
};

// fwd: the given configs, or every algorithm x accumulation dtype at its
// default config for the problem (default (8, 1536, 2048, 16) fp32) plus
// the fp64 reference.
Result<std::vector<jit::Instantiation>> family_instantiations(const CompileArgs& a) {
  if (a.family == "linear_recurrence") {
    if (!a.configs.empty())
      return Status::invalid_argument("--config applies to the fwd family only");
    return jit::linear_recurrence_family();
  }
  if (a.family == "fwd") {
    SSMTUNE_ASSIGN_OR_RETURN(FwdProblem p, a.problem.problem());
    std::vector<FwdConfig> configs;
    for (const auto& key : a.configs) {
      SSMTUNE_ASSIGN_OR_RETURN(FwdConfig c, FwdConfig::from_key(key));
      configs.push_back(c);
    }
    if (configs.empty())
      for (ScanAlgo algo : kAllScanAlgos)
        for (AccType acc : {AccType::kF32, AccType::kF64})
          configs.push_back(default_config(p, algo, acc, kCompileSharedBytes));
    std::vector<jit::Instantiation> out;
    for (const auto& c : configs) {
      SSMTUNE_RETURN_IF_ERROR(check_config(p, c, kCompileSharedBytes));
      SSMTUNE_ASSIGN_OR_RETURN(FwdPlan plan, plan_fwd(p, c));
      out.insert(out.end(), plan.kernels.begin(), plan.kernels.end());
    }
    if (a.configs.empty()) out.push_back(reference_instantiation(p.dtype));
    return out;
  }
  return Status::invalid_argument("unknown kernel family '" + a.family +
                                  "' (known: linear_recurrence, fwd)");
}

// Writes program NAME's cubin to DIR/NAME.cubin, less NAME's ".cu" (for
// cuobjdump / nvdisasm).
Status write_cubin(const std::string& dir, std::string name, const std::string& cubin) {
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".cu") == 0) name.resize(name.size() - 3);
  const std::string path = dir + "/" + name + ".cubin";
  std::ofstream f(path, std::ios::binary);
  f.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  f.close();
  if (!f) return Status::io_error("cannot write " + path);
  return Status::ok();
}

void run(const CompileArgs& a) {
  auto fmt = parse_format(a.format);
  if (!report("compile", fmt.status())) return;
  if (!report("compile", jit::validate_arch(a.arch))) return;
  auto inst = family_instantiations(a);
  if (!report("compile", inst.status())) return;
  auto sources = jit::TemplateSources::load_default();
  if (!report("compile", sources.status())) return;

  jit::Compiler compiler(*sources, nullptr, a.threads);
  const auto specs = jit::make_programs(*inst, a.per_program, a.arch, a.family);
  std::cerr << "compiling " << inst->size() << " instantiations of " << a.family << " for "
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
  cmd->add_option("--family", a->family,
                  "kernel family: linear_recurrence or fwd (problem flags apply)")
      ->capture_default_str();
  cmd->add_option("--per-program", a->per_program,
                  "instantiations per NVRTC program (0: all in one)")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "parallel NVRTC compilations (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--config", a->configs,
                  "fwd: compile these config keys (as `ssmtune db show` prints them) instead of "
                  "every algorithm's default");
  cmd->add_option(
      "--cubin-dir", a->cubin_dir,
      "write each program's cubin to DIR/PROGRAM.cubin (an existing folder), e.g. fwd_0.cubin");
  cmd->add_option("--format", a->format, "table, json or csv")->capture_default_str();
  add_problem_options(cmd, a->problem);
  cmd->callback([a] { run(*a); });
}

}  // namespace ssmtune::cli
