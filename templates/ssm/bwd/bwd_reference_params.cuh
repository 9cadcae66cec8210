// Parameters of the fp64 GPU reference of the backward (bwd_reference.cuh),
// shared by host and device code (plain C++). Every tensor is fp64 and
// contiguous in the layouts of tuner/host_inputs.h; the host uploads the
// already rounded inputs as doubles, exactly.
#pragma once

namespace ssmtune_kernels {

// What one launch of ssm_bwd_reference_reduce sums.
enum BwdRefReduce : int {
  kBwdRefReduceA = 0,     // dA (dim, dstate) over batch
  kBwdRefReduceB = 1,     // dB: variable over a group's units, constant over batch
  kBwdRefReduceC = 2,     // dC: likewise
  kBwdRefReduceD = 3,     // dD (dim) over batch
  kBwdRefReduceBias = 4,  // ddelta_bias (dim) over batch
};

struct BwdRefParams {
  int batch, dim, seqlen, dstate, groups, dim_per_group;
  int var_b, var_c, has_d, has_z, has_bias, softplus, has_h0, has_dlast;
  // Work units: `slice` consecutive channels of one (batch, group), one
  // thread each; `slices` units per (batch, group); units in all.
  int slice, slices;
  long long units;
  int what;  // BwdRefReduce, for the reduce kernel

  // Inputs (null when absent): u, delta, z, dout (batch, dim, seqlen); A
  // (dim, dstate); B, C (batch, groups, dstate, seqlen) or (dim, dstate); D,
  // delta_bias (dim); h0, dlast (batch, dim, dstate).
  const double *u, *delta, *A, *B, *C, *D, *z, *delta_bias, *h0, *dout, *dlast;
  // Outputs: du, ddelta, dz (batch, dim, seqlen); dh0 (batch, dim, dstate);
  // written by the units kernel. dA, dB, dC, dD, ddelta_bias in the layouts
  // of their inputs, written by the reduce launches.
  double *du, *ddelta, *dz, *dh0;
  double *dA, *dB, *dC, *dD, *ddelta_bias;

  // Scratch. Per unit, interleaved (element i of unit k at i * units + k, so
  // a warp's threads touch consecutive doubles): hs (dstate * seqlen) the
  // forward states of the unit's current channel; dts, dys (seqlen) its
  // delta after bias/softplus and dout * silu(z); part_b, part_c (dstate *
  // seqlen) the unit's sums of variable dB, dC over its channels.
  double *hs, *dts, *dys, *part_b, *part_c;
  // Per (batch, dim, dstate) row: dA, constant dB, constant dC; per (batch,
  // dim): dD, ddelta_bias. Summed over batch by the reduce launches.
  double *part_a, *part_bc, *part_cc, *part_d, *part_bias;
};

}  // namespace ssmtune_kernels
