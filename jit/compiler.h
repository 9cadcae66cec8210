// NVRTC front end: compiles one CUDA C++ translation unit with a list of
// name expressions (template instantiations) to a cubin for one arch, and
// returns the cubin, the lowered names, the log and each kernel's ptxas
// resource report. Many instantiations go into one program (one parse of
// the headers); independent programs compile in parallel on a thread pool.
// Results are memoized in a CubinCache keyed by cache_key().
// Thread safety: compile() and compile_all() may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "jit/cubin_cache.h"
#include "jit/template_sources.h"
#include "ssmtune/status.h"

namespace ssmtune::jit {

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }
};
NvrtcVersion nvrtc_version();

// "sm_90" from compute capability (9, 0).
std::string arch_for(int cc_major, int cc_minor);
// Accepts "sm_80", "sm_90", "sm_90a", ... ; rejects anything else.
Status validate_arch(const std::string& arch);

struct ProgramSpec {
  std::string name = "ssmtune.cu";  // file name shown in the log
  std::string source;               // the translation unit; may #include templates
  std::vector<std::string> name_expressions;
  std::string arch = "sm_90";
  std::vector<std::string> extra_options;  // appended after the standard ones
};

class Compiler {
 public:
  // `cache` may be null (no memoization); it must outlive the Compiler.
  // `threads` == 0: one per hardware thread.
  Compiler(TemplateSources sources, CubinCache* cache, unsigned threads = 0);

  // The options NVRTC is given for `spec` (standard ones, then extra).
  std::vector<std::string> options_for(const ProgramSpec& spec) const;
  // Hash of source, templates, name expressions, options, NVRTC version, arch.
  std::string cache_key(const ProgramSpec& spec) const;

  Result<CompiledProgram> compile(const ProgramSpec& spec);
  // Compiles on the pool; results in the order of `specs`.
  std::vector<Result<CompiledProgram>> compile_all(const std::vector<ProgramSpec>& specs);

  const TemplateSources& sources() const { return sources_; }
  // Directory of the toolkit headers (cuda_fp16.h, ...), or empty if none found.
  const std::string& cuda_include_dir() const { return cuda_include_; }

 private:
  Result<CompiledProgram> compile_uncached(const ProgramSpec& spec, const std::string& key) const;

  TemplateSources sources_;
  CubinCache* cache_;
  std::string cuda_include_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace ssmtune::jit
