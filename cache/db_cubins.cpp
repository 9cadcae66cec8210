// The cubins table: compiled programs keyed by the JIT cache's hash, with
// their kernels (name expression, lowered name, resources) as JSON.
#include "cache/tuning_db.h"

#include <ctime>

namespace ssmtune::cache {
namespace {

nlohmann::json kernels_json(const std::vector<jit::KernelImage>& kernels) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    arr.push_back({{"name_expression", k.name_expression},
                   {"lowered_name", k.lowered_name},
                   {"resources",
                    {{"registers", r.registers},
                     {"spill_store_bytes", r.spill_store_bytes},
                     {"spill_load_bytes", r.spill_load_bytes},
                     {"stack_frame_bytes", r.stack_frame_bytes},
                     {"shared_bytes", r.shared_bytes},
                     {"const_bytes", r.const_bytes},
                     {"barriers", r.barriers},
                     {"found", r.found}}}});
  }
  return arr;
}

Result<std::vector<jit::KernelImage>> parse_kernels(const std::string& text,
                                                    const std::string& key) {
  std::vector<jit::KernelImage> out;
  try {
    for (const auto& k : nlohmann::json::parse(text)) {
      jit::KernelImage img;
      img.name_expression = k.at("name_expression").get<std::string>();
      img.lowered_name = k.at("lowered_name").get<std::string>();
      const auto& r = k.at("resources");
      img.resources.registers = r.at("registers").get<int>();
      img.resources.spill_store_bytes = r.at("spill_store_bytes").get<int>();
      img.resources.spill_load_bytes = r.at("spill_load_bytes").get<int>();
      img.resources.stack_frame_bytes = r.at("stack_frame_bytes").get<int>();
      img.resources.shared_bytes = r.at("shared_bytes").get<int>();
      img.resources.const_bytes = r.at("const_bytes").get<int>();
      img.resources.barriers = r.at("barriers").get<int>();
      img.resources.found = r.at("found").get<bool>();
      out.push_back(std::move(img));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::corrupt("cubin " + key + ": unreadable kernels column: " + e.what());
  }
  return out;
}

}  // namespace

Status TuningDb::put_cubin(const jit::CompiledProgram& p) {
  if (p.key.empty()) return Status::invalid_argument("compiled program without a cache key");
  const std::string kernels = kernels_json(p.kernels).dump();
  return write_transaction([&]() -> Status {
    SSMTUNE_ASSIGN_OR_RETURN(
        Statement st, c_.prepare("INSERT OR REPLACE INTO cubins (key, arch, cubin, kernels, log, "
                                 "created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    SSMTUNE_RETURN_IF_ERROR(st.bind(1, p.key));
    SSMTUNE_RETURN_IF_ERROR(st.bind(2, p.arch));
    SSMTUNE_RETURN_IF_ERROR(st.bind_blob(3, p.cubin));
    SSMTUNE_RETURN_IF_ERROR(st.bind(4, kernels));
    SSMTUNE_RETURN_IF_ERROR(st.bind(5, p.log));
    SSMTUNE_RETURN_IF_ERROR(st.bind(6, int64_t{std::time(nullptr)}));
    return st.run();
  });
}

Result<std::optional<jit::CompiledProgram>> TuningDb::get_cubin(const std::string& key) {
  SSMTUNE_ASSIGN_OR_RETURN(
      Statement st, c_.prepare("SELECT arch, cubin, kernels, log FROM cubins WHERE key = ?1"));
  SSMTUNE_RETURN_IF_ERROR(st.bind(1, key));
  SSMTUNE_ASSIGN_OR_RETURN(bool row, st.step());
  if (!row) return std::optional<jit::CompiledProgram>();
  jit::CompiledProgram p;
  p.key = key;
  p.arch = st.column_text(0);
  p.cubin = st.column_blob(1);
  SSMTUNE_ASSIGN_OR_RETURN(p.kernels, parse_kernels(st.column_text(2), key));
  p.log = st.column_text(3);
  return std::optional<jit::CompiledProgram>(std::move(p));
}

Result<int64_t> TuningDb::cubin_count() { return c_.query_int("SELECT count(*) FROM cubins"); }

}  // namespace ssmtune::cache
