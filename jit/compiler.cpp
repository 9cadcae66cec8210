// NVRTC compilation with RAII program ownership.
#include "jit/compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "core/hash.h"

#ifndef SSMTUNE_CUDA_INCLUDE_DIR
#define SSMTUNE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace ssmtune::jit {
namespace {

// Owns one nvrtcProgram.
class NvrtcProgram {
 public:
  NvrtcProgram() = default;
  ~NvrtcProgram() {
    if (prog_ != nullptr) nvrtcDestroyProgram(&prog_);
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string find_cuda_include() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* c :
       std::initializer_list<const char*>{std::getenv("SSMTUNE_CUDA_INCLUDE"),
                                          SSMTUNE_CUDA_INCLUDE_DIR, "/usr/local/cuda/include"}) {
    if (c != nullptr && *c != '\0' && fs::exists(fs::path(c) / "cuda_fp16.h", ec)) return c;
  }
  return {};
}

std::string program_log(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

}  // namespace

NvrtcVersion nvrtc_version() {
  NvrtcVersion v;
  if (nvrtcVersion(&v.major, &v.minor) != NVRTC_SUCCESS) v = {};
  return v;
}

std::string arch_for(int cc_major, int cc_minor) {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

Status validate_arch(const std::string& arch) {
  static const std::regex kArch(R"(sm_[1-9][0-9]{1,2}[af]?)");
  if (!std::regex_match(arch, kArch))
    return Status::invalid_argument("arch '" + arch + "' is not of the form sm_XX (e.g. sm_90)");
  return Status::ok();
}

Compiler::Compiler(TemplateSources sources, CubinCache* cache, unsigned threads)
    : sources_(std::move(sources)),
      cache_(cache),
      cuda_include_(find_cuda_include()),
      pool_(std::make_unique<ThreadPool>(threads)) {}

std::vector<std::string> Compiler::options_for(const ProgramSpec& spec) const {
  std::vector<std::string> opts = {"-arch=" + spec.arch, "-std=c++17", "-Xptxas=-v"};
  if (!cuda_include_.empty()) opts.push_back("-I" + cuda_include_);
  opts.insert(opts.end(), spec.extra_options.begin(), spec.extra_options.end());
  return opts;
}

std::string Compiler::cache_key(const ProgramSpec& spec) const {
  Hasher h;
  h.add("ssmtune-cubin-v1").add(spec.source).add(sources_.hash());
  h.add_u64(spec.name_expressions.size());
  for (const auto& e : spec.name_expressions) h.add(e);
  for (const auto& o : options_for(spec)) h.add(o);
  h.add(nvrtc_version().to_string()).add(spec.arch);
  return h.hex();
}

Result<CompiledProgram> Compiler::compile(const ProgramSpec& spec) {
  SSMTUNE_RETURN_IF_ERROR(validate_arch(spec.arch));
  if (spec.name_expressions.empty())
    return Status::invalid_argument("program '" + spec.name + "' has no name expressions");
  const std::string key = cache_key(spec);
  if (cache_ != nullptr) {
    if (auto hit = cache_->get(key)) {
      hit->from_cache = true;
      return std::move(*hit);
    }
  }
  auto result = compile_uncached(spec, key);
  if (result && cache_ != nullptr) cache_->put(*result);
  return result;
}

std::vector<Result<CompiledProgram>> Compiler::compile_all(const std::vector<ProgramSpec>& specs) {
  std::vector<std::future<Result<CompiledProgram>>> futures;
  futures.reserve(specs.size());
  for (const auto& spec : specs)
    futures.push_back(pool_->submit([this, &spec] { return compile(spec); }));
  std::vector<Result<CompiledProgram>> out;
  out.reserve(specs.size());
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

Result<CompiledProgram> Compiler::compile_uncached(const ProgramSpec& spec,
                                                   const std::string& key) const {
  const auto options = options_for(spec);
  auto describe = [&](const std::string& what) {
    std::ostringstream os;
    os << what << " compiling '" << spec.name << "' for " << spec.arch
       << "\n  name expressions: " << join(spec.name_expressions, ", ")
       << "\n  options: " << join(options, " ");
    return os.str();
  };
  if (cuda_include_.empty())
    return Status::not_found(describe(
        "CUDA toolkit headers (cuda_fp16.h) not found; set SSMTUNE_CUDA_INCLUDE to the toolkit's "
        "include directory,"));

  std::vector<const char*> header_texts, header_names;
  for (const auto& [path, text] : sources_.files()) {
    header_names.push_back(path.c_str());
    header_texts.push_back(text.c_str());
  }
  NvrtcProgram prog;
  nvrtcResult rc = nvrtcCreateProgram(prog.out(), spec.source.c_str(), spec.name.c_str(),
                                      static_cast<int>(header_texts.size()), header_texts.data(),
                                      header_names.data());
  if (rc != NVRTC_SUCCESS) return Status::compile_error(describe(nvrtcGetErrorString(rc)));
  for (const auto& e : spec.name_expressions) {
    rc = nvrtcAddNameExpression(prog.get(), e.c_str());
    if (rc != NVRTC_SUCCESS)
      return Status::compile_error(
          describe(std::string(nvrtcGetErrorString(rc)) + " adding name expression '" + e + "'"));
  }
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& o : options) argv.push_back(o.c_str());

  const auto t0 = std::chrono::steady_clock::now();
  rc = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  const auto t1 = std::chrono::steady_clock::now();

  CompiledProgram out;
  out.key = key;
  out.arch = spec.arch;
  out.log = program_log(prog.get());
  out.compile_seconds = std::chrono::duration<double>(t1 - t0).count();
  if (rc != NVRTC_SUCCESS)
    return Status::compile_error(describe(nvrtcGetErrorString(rc)) + "\n  log:\n" + out.log);

  size_t size = 0;
  rc = nvrtcGetCUBINSize(prog.get(), &size);
  if (rc != NVRTC_SUCCESS || size == 0)
    return Status::compile_error(describe(std::string("no cubin (") + nvrtcGetErrorString(rc) +
                                          "); is the arch a real one (sm_XX, not compute_XX)?"));
  out.cubin.resize(size);
  rc = nvrtcGetCUBIN(prog.get(), out.cubin.data());
  if (rc != NVRTC_SUCCESS) return Status::compile_error(describe(nvrtcGetErrorString(rc)));

  const auto report = parse_resource_report(out.log);
  for (const auto& e : spec.name_expressions) {
    const char* lowered = nullptr;
    rc = nvrtcGetLoweredName(prog.get(), e.c_str(), &lowered);
    if (rc != NVRTC_SUCCESS || lowered == nullptr)
      return Status::compile_error(
          describe(std::string(nvrtcGetErrorString(rc)) + " lowering name expression '" + e + "'"));
    KernelImage k;
    k.name_expression = e;
    k.lowered_name = lowered;  // copied before the program is destroyed
    auto it = report.find(k.lowered_name);
    if (it != report.end()) k.resources = it->second;
    out.kernels.push_back(std::move(k));
  }
  return out;
}

}  // namespace ssmtune::jit
