// GPU session setup.
#include "cli/gpu_session.h"

namespace ssmtune::cli {

Result<GpuSession> GpuSession::open(int ordinal, jit::CubinCache* cache) {
  SSMTUNE_ASSIGN_OR_RETURN(jit::Context ctx, jit::Context::create(ordinal));
  SSMTUNE_ASSIGN_OR_RETURN(jit::DeviceInfo info, jit::query_device(ordinal));
  SSMTUNE_ASSIGN_OR_RETURN(jit::TemplateSources sources, jit::TemplateSources::load_default());
  GpuSession s{std::move(ctx), std::move(info), nullptr, nullptr};
  if (cache == nullptr) {
    s.cache = std::make_unique<jit::MemoryCubinCache>();
    cache = s.cache.get();
  }
  s.compiler = std::make_unique<jit::Compiler>(std::move(sources), cache);
  return s;
}

}  // namespace ssmtune::cli
