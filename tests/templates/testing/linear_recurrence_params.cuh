// Parameters of linear_recurrence, shared by host and device code.
#pragma once

namespace ssmtune_kernels {

struct LinearRecurrenceParams {
  const void* a;  // rows x length, row-major
  const void* b;  // rows x length
  void* h;        // rows x length, output
  long long rows;
  long long length;
};

}  // namespace ssmtune_kernels
