// Kernels that fail on purpose, so that tests can show a fault becomes a
// clean error (and, in the tuner, a recorded status) rather than a crash.
#pragma once

#include "testing/faults_params.cuh"

namespace ssmtune_kernels {

enum class FaultMode : int {
  kIllegalAddress = 0,  // store through a bad pointer
  kTrap = 1,            // __trap(): an unspecified launch failure
  kSpin = 2,            // busy loop: a "hang" for timeouts
};

template <FaultMode kMode>
__global__ void fault(const FaultParams p) {
  if (kMode == FaultMode::kIllegalAddress) {
    *reinterpret_cast<volatile int*>(p.address) = 1;
  } else if (kMode == FaultMode::kTrap) {
    __trap();
  } else {
    const long long start = clock64();
    while (clock64() - start < p.spin_cycles) {
    }
  }
}

}  // namespace ssmtune_kernels
