// A stand-in tuning worker for tests: greets like `ssmtune worker`, then, on
// its first request, launches a kernel that writes through an illegal
// address (tests/templates/testing/faults.cuh) and exits without answering,
// as a worker does whose context a faulting config has broken. Lets the GPU
// suite show that a tuning session records the fault and goes on.
#include <iostream>
#include <string>

#include "jit/compiler.h"
#include "jit/device.h"
#include "jit/module.h"
#include "jit/stream.h"
#include "support/test_family.h"
#include "templates/testing/faults_params.cuh"
#include "tuner/worker_measurer.h"

int main() {
  using namespace ssmtune;
  auto device = jit::query_device(0);
  auto context = device ? jit::Context::create(0) : Result<jit::Context>(device.status());
  if (!device || !context) {
    std::cout << nlohmann::json{{"error", "fault worker: no GPU"}}.dump() << std::endl;
    return 1;
  }
  std::cout << nlohmann::json{{"hello", true},
                              {"device", to_json(*device)},
                              {"seed", 1},
                              {"reference", "none"},
                              {"template_hash", "fault-worker"}}
                   .dump()
            << std::endl;
  std::string line;
  if (!std::getline(std::cin, line)) return 0;
  jit::Compiler compiler(testing::test_sources(), nullptr, 1);
  auto program = compiler.compile(
      jit::make_programs({{"testing/faults.cuh",
                           "ssmtune_kernels::fault<ssmtune_kernels::FaultMode::kIllegalAddress>"}},
                         0, device->arch(), "fault")[0]);
  if (!program) return 2;
  auto module = jit::Module::load(program->cubin);
  if (!module) return 2;
  auto kernel = module->kernel(program->kernels[0].lowered_name);
  auto stream = jit::Stream::create();
  if (!kernel || !stream) return 2;
  ssmtune_kernels::FaultParams p{0x10, 0};
  Status s = kernel->launch(jit::Dim3{1}, jit::Dim3{32}, 0, stream->get(), p);
  if (s) s = stream->synchronize();
  std::cerr << "fault worker: " << (s ? "the kernel did not fault" : s.to_string()) << "\n";
  return 3;  // no answer: the session sees a lost worker
}
