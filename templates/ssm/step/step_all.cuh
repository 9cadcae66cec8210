// Every decode-step kernel template: the one header the step family's
// programs are instantiated from.
#pragma once

#include "ssm/step/step_kernel.cuh"
