// The kernel parameters the forward and the backward fill alike: the
// problem's sizes and the scan's inputs (u, delta, A, B, C, D, delta_bias,
// z, h0), pointers and strides, in the forward's parameter block (the
// backward's holds one). Each family adds its own outputs.
#pragma once

#include "ssm/fwd_params.cuh"
#include "tuner/fwd/problem.h"

namespace ssmtune {

// The input tensors of FwdTensors or BwdTensors, by reference.
struct ScanInputs {
  const TensorArg &u, &delta, &A, &B, &C, &D, &z, &delta_bias, &h0;
};
template <typename Tensors>
ScanInputs scan_inputs(const Tensors& t) {
  return {t.u, t.delta, t.A, t.B, t.C, t.D, t.z, t.delta_bias, t.h0};
}

// Sizes, then the inputs the problem's flags say are present (D, delta_bias,
// z and h0 only then); vec4 is left for the family (it has outputs to check).
void fill_scan_inputs(const FwdProblem& p, const ScanInputs& in, ssmtune_kernels::SsmFwdParams& k);

// The scan's flags in an fp64 reference's parameter block (the forward's
// RefParams and the backward's BwdRefParams name them alike).
template <typename RefParamsT>
void set_reference_flags(const FwdProblem& p, RefParamsT& r) {
  r.var_b = p.variable_b;
  r.var_c = p.variable_c;
  r.has_d = p.has_d;
  r.has_z = p.has_z;
  r.has_bias = p.has_delta_bias;
  r.softplus = p.delta_softplus;
  r.has_h0 = p.has_initial_state;
}

// B/C-shaped strides (B, C, dB, dC): variable, (batch, group, dstate)
// strides; constant ((dim, dstate) rows), the dim stride and zeros.
void bc_strides(const TensorArg& a, bool variable, long long& s0, long long& s1, long long& s2);

// Whether a's pointer and its first `strides` strides are multiples of 4
// elements of `dtype` (the kernels' vector rows).
bool rows_vec4(const TensorArg& a, int strides, DType dtype);

// rows_vec4 of every time-contiguous input the problem reads: u, delta,
// variable B and C, z.
bool inputs_vec4(const FwdProblem& p, const ScanInputs& in);

}  // namespace ssmtune
