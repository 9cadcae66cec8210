// Every backward kernel template, for programs that instantiate several at
// once (one parse of the headers).
#pragma once

#include "ssm/bwd/bwd_finalize.cuh"
#include "ssm/bwd/bwd_multipass.cuh"
#include "ssm/bwd/bwd_sequential.cuh"
#include "ssm/bwd/bwd_state_sum.cuh"
#include "ssm/bwd/bwd_warpscan.cuh"
