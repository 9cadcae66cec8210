// Launch of the fp64 GPU backward reference: the units kernel, then one
// reduce launch per summed gradient, on one stream.
#include "tuner/bwd/reference_gpu.h"

#include <algorithm>

#include "jit/device_buffer.h"
#include "jit/driver.h"
#include "jit/module.h"
#include "ssm/bwd/bwd_reference_params.cuh"
#include "tuner/scan_params.h"

namespace ssmtune::bwd {
namespace {

using ssmtune_kernels::BwdRefParams;
constexpr const char* kHeader = "ssm/bwd/bwd_reference.cuh";
// Reduce launches: one thread per output element.
constexpr unsigned kThreads = 128;
// Units launch: one warp per block, so that the few thousand units of a
// large shape (the scratch limit caps them) spread over every SM.
constexpr unsigned kUnitThreads = 32;

// Doubles of per-unit scratch: hs, part_b, part_c (dstate x seqlen) and
// dts, dys (seqlen).
size_t unit_doubles(const FwdProblem& p) {
  return static_cast<size_t>(p.seqlen) *
         static_cast<size_t>(p.dstate * (1 + p.variable_b + p.variable_c) + 2);
}

// Owns every device buffer of one run.
struct Buffers {
  jit::DeviceBuffer u, delta, A, B, C, D, z, bias, h0, dout, dlast;
  jit::DeviceBuffer du, ddelta, dz, dh0, dA, dB, dC, dD, dbias;
  jit::DeviceBuffer hs, dts, dys, part_b, part_c, part_a, part_bc, part_cc, part_d, part_bias;
};

Status upload(const std::vector<double>& v, jit::DeviceBuffer& buf) {
  if (v.empty()) return Status::ok();
  SSMTUNE_ASSIGN_OR_RETURN(buf, jit::DeviceBuffer::allocate(v.size() * sizeof(double)));
  return buf.upload(v);
}

Status allocate(size_t doubles, jit::DeviceBuffer& buf) {
  if (doubles == 0) return Status::ok();
  SSMTUNE_ASSIGN_OR_RETURN(buf, jit::DeviceBuffer::allocate(doubles * sizeof(double)));
  return Status::ok();
}

Status download(const jit::DeviceBuffer& buf, size_t doubles, std::vector<double>& out) {
  out.resize(doubles);
  if (doubles == 0) return Status::ok();
  return buf.download(out);
}

unsigned blocks_for(long long n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

std::vector<jit::Instantiation> reference_gpu_instantiations() {
  return {{kHeader, "ssmtune_kernels::ssm_bwd_reference_units"},
          {kHeader, "ssmtune_kernels::ssm_bwd_reference_reduce"}};
}

BwdRefParams reference_gpu_params(const FwdProblem& p, bool has_dlast, int slice) {
  BwdRefParams r{};
  r.batch = static_cast<int>(p.batch);
  r.dim = static_cast<int>(p.dim);
  r.seqlen = static_cast<int>(p.seqlen);
  r.dstate = static_cast<int>(p.dstate);
  r.groups = static_cast<int>(p.groups);
  r.dim_per_group = static_cast<int>(p.dim_per_group());
  set_reference_flags(p, r);
  r.has_dlast = has_dlast;
  r.slice = slice;
  r.slices = static_cast<int>((p.dim_per_group() + slice - 1) / slice);
  r.units = p.batch * p.groups * r.slices;
  return r;
}

size_t reference_gpu_scratch_bytes(const FwdProblem& p, int slice) {
  const size_t units = static_cast<size_t>(reference_gpu_params(p, false, slice).units);
  const size_t rows = static_cast<size_t>(p.batch * p.dim);
  return sizeof(double) * (units * unit_doubles(p) + rows * (3 * p.dstate + 2));
}

int reference_gpu_slice(const FwdProblem& p, size_t scratch_limit_bytes) {
  const size_t per_unit = sizeof(double) * unit_doubles(p);
  const size_t max_units = std::max<size_t>(1, scratch_limit_bytes / per_unit);
  const int64_t slices =
      std::clamp<int64_t>(static_cast<int64_t>(max_units / static_cast<size_t>(p.batch * p.groups)),
                          1, p.dim_per_group());
  return static_cast<int>((p.dim_per_group() + slices - 1) / slices);
}

Result<BwdHostGrads> reference_backward_gpu(const FwdHostInputs& in,
                                            const std::vector<double>& dout,
                                            const std::vector<double>& dlast,
                                            const jit::DeviceInfo& device, jit::Compiler& compiler,
                                            CUstream stream, size_t scratch_limit_bytes) {
  if (!backward_sizes_match(in, dout, dlast))
    return Status::invalid_argument(
        "backward reference: inputs, dout or dlast do not match the problem " + in.problem.key());
  const FwdProblem& p = in.problem;
  auto specs = jit::make_programs(reference_gpu_instantiations(), 0, device.arch(), "ssm_bwd_ref");
  SSMTUNE_ASSIGN_OR_RETURN(jit::CompiledProgram program, compiler.compile(specs.at(0)));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Module module, jit::Module::load(program.cubin));
  const auto names = reference_gpu_instantiations();
  const jit::KernelImage* units_image = program.find(names[0].name_expression);
  const jit::KernelImage* reduce_image = program.find(names[1].name_expression);
  if (units_image == nullptr || reduce_image == nullptr)
    return Status::internal("backward reference: a kernel is missing from its program");
  SSMTUNE_ASSIGN_OR_RETURN(jit::Kernel units_kernel, module.kernel(units_image->lowered_name));
  SSMTUNE_ASSIGN_OR_RETURN(jit::Kernel reduce_kernel, module.kernel(reduce_image->lowered_name));
  SSMTUNE_ASSIGN_OR_RETURN(const jit::Driver* drv_ptr, jit::Driver::get());
  const jit::Driver& drv = *drv_ptr;

  const size_t limit =
      scratch_limit_bytes != 0 ? scratch_limit_bytes
      : device.total_memory == 0
          ? size_t{1} << 30
          : std::clamp<size_t>(device.total_memory / 8, size_t{256} << 20, size_t{8} << 30);
  const int slice = reference_gpu_slice(p, limit);
  BwdRefParams r = reference_gpu_params(p, !dlast.empty(), slice);
  const long long units = r.units;
  const size_t bdl = static_cast<size_t>(p.batch * p.dim * p.seqlen);
  const size_t rows = static_cast<size_t>(p.batch * p.dim);
  const size_t state = rows * static_cast<size_t>(p.dstate);
  const size_t cst = static_cast<size_t>(p.dim * p.dstate);
  const size_t var = static_cast<size_t>(p.batch * p.groups * p.dstate * p.seqlen);
  const size_t per_unit_nl = static_cast<size_t>(units * p.dstate * p.seqlen);

  Buffers m;
  SSMTUNE_RETURN_IF_ERROR(upload(in.u, m.u));
  SSMTUNE_RETURN_IF_ERROR(upload(in.delta, m.delta));
  SSMTUNE_RETURN_IF_ERROR(upload(in.A, m.A));
  SSMTUNE_RETURN_IF_ERROR(upload(in.B, m.B));
  SSMTUNE_RETURN_IF_ERROR(upload(in.C, m.C));
  SSMTUNE_RETURN_IF_ERROR(upload(in.D, m.D));
  SSMTUNE_RETURN_IF_ERROR(upload(in.z, m.z));
  SSMTUNE_RETURN_IF_ERROR(upload(in.delta_bias, m.bias));
  SSMTUNE_RETURN_IF_ERROR(upload(in.h0, m.h0));
  SSMTUNE_RETURN_IF_ERROR(upload(dout, m.dout));
  SSMTUNE_RETURN_IF_ERROR(upload(dlast, m.dlast));
  SSMTUNE_RETURN_IF_ERROR(allocate(bdl, m.du));
  SSMTUNE_RETURN_IF_ERROR(allocate(bdl, m.ddelta));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.has_z ? bdl : 0, m.dz));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.has_initial_state ? state : 0, m.dh0));
  SSMTUNE_RETURN_IF_ERROR(allocate(cst, m.dA));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_b ? var : cst, m.dB));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_c ? var : cst, m.dC));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.has_d ? p.dim : 0, m.dD));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.has_delta_bias ? p.dim : 0, m.dbias));
  SSMTUNE_RETURN_IF_ERROR(allocate(per_unit_nl, m.hs));
  SSMTUNE_RETURN_IF_ERROR(allocate(static_cast<size_t>(units * p.seqlen), m.dts));
  SSMTUNE_RETURN_IF_ERROR(allocate(static_cast<size_t>(units * p.seqlen), m.dys));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_b ? per_unit_nl : 0, m.part_b));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_c ? per_unit_nl : 0, m.part_c));
  SSMTUNE_RETURN_IF_ERROR(allocate(state, m.part_a));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_b ? 0 : state, m.part_bc));
  SSMTUNE_RETURN_IF_ERROR(allocate(p.variable_c ? 0 : state, m.part_cc));
  SSMTUNE_RETURN_IF_ERROR(allocate(rows, m.part_d));
  SSMTUNE_RETURN_IF_ERROR(allocate(rows, m.part_bias));
  // The uploads went through the legacy stream, which a non-blocking stream
  // does not wait for.
  SSMTUNE_CU(drv.cuCtxSynchronize());

  r.u = m.u.as<double>();
  r.delta = m.delta.as<double>();
  r.A = m.A.as<double>();
  r.B = m.B.as<double>();
  r.C = m.C.as<double>();
  r.D = m.D.as<double>();
  r.z = m.z.as<double>();
  r.delta_bias = m.bias.as<double>();
  r.h0 = m.h0.as<double>();
  r.dout = m.dout.as<double>();
  r.dlast = m.dlast.as<double>();
  r.du = m.du.as<double>();
  r.ddelta = m.ddelta.as<double>();
  r.dz = m.dz.as<double>();
  r.dh0 = m.dh0.as<double>();
  r.dA = m.dA.as<double>();
  r.dB = m.dB.as<double>();
  r.dC = m.dC.as<double>();
  r.dD = m.dD.as<double>();
  r.ddelta_bias = m.dbias.as<double>();
  r.hs = m.hs.as<double>();
  r.dts = m.dts.as<double>();
  r.dys = m.dys.as<double>();
  r.part_b = m.part_b.as<double>();
  r.part_c = m.part_c.as<double>();
  r.part_a = m.part_a.as<double>();
  r.part_bc = m.part_bc.as<double>();
  r.part_cc = m.part_cc.as<double>();
  r.part_d = m.part_d.as<double>();
  r.part_bias = m.part_bias.as<double>();

  SSMTUNE_RETURN_IF_ERROR(units_kernel.launch(jit::Dim3{blocks_for(units, kUnitThreads)},
                                              jit::Dim3{kUnitThreads}, 0, stream, r));
  auto reduce = [&](int what, size_t count) {
    r.what = what;
    return reduce_kernel.launch(jit::Dim3{blocks_for(static_cast<long long>(count), kThreads)},
                                jit::Dim3{kThreads}, 0, stream, r);
  };
  using namespace ssmtune_kernels;
  SSMTUNE_RETURN_IF_ERROR(reduce(kBwdRefReduceA, cst));
  SSMTUNE_RETURN_IF_ERROR(reduce(kBwdRefReduceB, p.variable_b ? var : cst));
  SSMTUNE_RETURN_IF_ERROR(reduce(kBwdRefReduceC, p.variable_c ? var : cst));
  if (p.has_d) SSMTUNE_RETURN_IF_ERROR(reduce(kBwdRefReduceD, p.dim));
  if (p.has_delta_bias) SSMTUNE_RETURN_IF_ERROR(reduce(kBwdRefReduceBias, p.dim));
  // The stream is non-blocking: the synchronous copies below would not wait for it.
  SSMTUNE_CU(drv.cuStreamSynchronize(stream));

  BwdHostGrads out;
  SSMTUNE_RETURN_IF_ERROR(download(m.du, bdl, out.du));
  SSMTUNE_RETURN_IF_ERROR(download(m.ddelta, bdl, out.ddelta));
  if (p.has_z) SSMTUNE_RETURN_IF_ERROR(download(m.dz, bdl, out.dz));
  if (p.has_initial_state) SSMTUNE_RETURN_IF_ERROR(download(m.dh0, state, out.dh0));
  SSMTUNE_RETURN_IF_ERROR(download(m.dA, cst, out.dA));
  SSMTUNE_RETURN_IF_ERROR(download(m.dB, p.variable_b ? var : cst, out.dB));
  SSMTUNE_RETURN_IF_ERROR(download(m.dC, p.variable_c ? var : cst, out.dC));
  if (p.has_d) SSMTUNE_RETURN_IF_ERROR(download(m.dD, p.dim, out.dD));
  if (p.has_delta_bias) SSMTUNE_RETURN_IF_ERROR(download(m.dbias, p.dim, out.ddelta_bias));
  return out;
}

}  // namespace ssmtune::bwd
