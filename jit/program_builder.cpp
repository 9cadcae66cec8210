// Program grouping.
#include "jit/program_builder.h"

#include <set>

namespace ssmtune::jit {

std::vector<ProgramSpec> make_programs(const std::vector<Instantiation>& instantiations,
                                       size_t per_program, const std::string& arch,
                                       const std::string& name_prefix) {
  if (per_program == 0) per_program = instantiations.size() ? instantiations.size() : 1;
  std::vector<ProgramSpec> out;
  for (size_t begin = 0; begin < instantiations.size(); begin += per_program) {
    const size_t end = std::min(instantiations.size(), begin + per_program);
    ProgramSpec spec;
    spec.name = name_prefix + "_" + std::to_string(out.size()) + ".cu";
    spec.arch = arch;
    std::set<std::string> headers;
    for (size_t i = begin; i < end; ++i) {
      headers.insert(instantiations[i].header);
      spec.name_expressions.push_back(instantiations[i].name_expression);
    }
    for (const auto& h : headers) spec.source += "#include \"" + h + "\"\n";
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace ssmtune::jit
