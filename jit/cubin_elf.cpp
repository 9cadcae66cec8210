// Minimal ELF64 section walk (little-endian, as every cubin is).
#include "jit/cubin_elf.h"

#include <elf.h>

#include <cstring>

namespace ssmtune::jit {

Result<std::map<std::string, std::string>> kernel_code_sections(const std::string& cubin) {
  if (cubin.size() < sizeof(Elf64_Ehdr) || std::memcmp(cubin.data(), ELFMAG, SELFMAG) != 0 ||
      cubin[EI_CLASS] != ELFCLASS64)
    return Status::corrupt("not an ELF64 cubin");
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  const uint64_t table_end = eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || table_end > cubin.size() ||
      eh.e_shstrndx >= eh.e_shnum)
    return Status::corrupt("cubin section table out of range");
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, cubin.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr names = section(eh.e_shstrndx);
  if (names.sh_offset + names.sh_size > cubin.size())
    return Status::corrupt("cubin names out of range");
  std::map<std::string, std::string> out;
  static const std::string kPrefix = ".text.";
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.sh_size) return Status::corrupt("cubin section name out of range");
    const char* name = cubin.data() + names.sh_offset + sh.sh_name;
    const size_t max_len = names.sh_size - sh.sh_name;
    const std::string n(name, strnlen(name, max_len));
    if (n.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > cubin.size())
      return Status::corrupt("cubin section " + n + " out of range");
    out[n.substr(kPrefix.size())] = cubin.substr(sh.sh_offset, sh.sh_size);
  }
  return out;
}

}  // namespace ssmtune::jit
