// Parameters of the fault kernels, shared by host and device code.
#pragma once

namespace ssmtune_kernels {

struct FaultParams {
  unsigned long long address;  // written by kIllegalAddress
  long long spin_cycles;       // kSpin runs this long
};

}  // namespace ssmtune_kernels
