// Every forward kernel template, for programs that instantiate several
// algorithms at once (one parse of the headers).
#pragma once

#include "ssm/fwd_blelloch.cuh"
#include "ssm/fwd_blockscan.cuh"
#include "ssm/fwd_lookback.cuh"
#include "ssm/fwd_multipass.cuh"
#include "ssm/fwd_pipelined.cuh"
#include "ssm/fwd_reference.cuh"
#include "ssm/fwd_sequential.cuh"
#include "ssm/fwd_split.cuh"
#include "ssm/fwd_state_sum.cuh"
#include "ssm/fwd_warpscan.cuh"
