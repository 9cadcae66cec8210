// The fp64 GPU backward reference without a GPU: its kernels compile under
// NVRTC for sm_90 and sm_80, and its work split keeps the scratch bounded.
#include "tuner/bwd/reference_gpu.h"

#include <catch2/catch.hpp>

#include "support/problems.h"

namespace ssmtune::bwd {
namespace {

TEST_CASE("backward GPU reference compiles for sm_90 and sm_80", "[bwd]") {
  const auto arch = GENERATE(as<std::string>{}, "sm_90", "sm_80");
  jit::Compiler compiler(jit::TemplateSources::embedded(), nullptr, 1);
  const auto inst = reference_gpu_instantiations();
  auto specs = jit::make_programs(inst, 0, arch, "bwd_ref");
  REQUIRE(specs.size() == 1);
  auto r = compiler.compile(specs[0]);
  INFO(r.status().to_string());
  REQUIRE(r.is_ok());
  INFO(r->log);
  REQUIRE(r->kernels.size() == inst.size());
  for (const auto& i : inst) {
    const jit::KernelImage* k = r->find(i.name_expression);
    REQUIRE(k != nullptr);
    CHECK(k->lowered_name.rfind("_Z", 0) == 0);
    CHECK(k->resources.found);
    CHECK(k->resources.registers > 0);
  }
}

TEST_CASE("backward GPU reference's work split bounds its scratch", "[bwd]") {
  FwdProblem p = testing::shape(4, 5120, 8192, 16, DType::kBF16);
  const size_t limit = size_t{8} << 30;
  const int slice = reference_gpu_slice(p, limit);
  CHECK(slice > 1);
  CHECK(reference_gpu_scratch_bytes(p, slice) <= limit + (size_t{64} << 20));
  CHECK(reference_gpu_scratch_bytes(p, slice - 1) > limit);  // the fewest channels that fit
  // Small problems: one channel per thread.
  const FwdProblem small = testing::shape(2, 37, 129, 16, DType::kF32);
  CHECK(reference_gpu_slice(small, limit) == 1);
  // Never more than a group's channels, however small the limit.
  p.groups = 4;
  CHECK(reference_gpu_slice(p, 1) == 5120 / 4);
}

}  // namespace
}  // namespace ssmtune::bwd
