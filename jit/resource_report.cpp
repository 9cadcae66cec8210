// ptxas -v log parser. ptxas writes, per entry function:
//   ptxas info    : Compiling entry function '_Z...' for 'sm_90'
//   ptxas info    : Function properties for _Z...
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 12 registers, used 1 barriers, 16 bytes smem, 368 bytes cmem[0]
#include "jit/resource_report.h"

#include <regex>
#include <sstream>

namespace ssmtune::jit {
namespace {

int match_int(const std::string& line, const std::regex& re) {
  std::smatch m;
  if (std::regex_search(line, m, re)) return std::stoi(m[1].str());
  return 0;
}

}  // namespace

std::string ResourceUsage::to_string() const {
  std::ostringstream os;
  os << registers << " regs, " << shared_bytes << " B smem, " << stack_frame_bytes
     << " B stack, spills " << spill_store_bytes << "/" << spill_load_bytes << " B";
  return os.str();
}

std::map<std::string, ResourceUsage> parse_resource_report(const std::string& log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProps(R"(Function properties for (\S+))");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillSt(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLd(R"((\d+) bytes spill loads)");
  static const std::regex kRegs(R"(Used (\d+) registers)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[0\])");

  std::map<std::string, ResourceUsage> out;
  std::string current;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kEntry) || std::regex_search(line, m, kProps)) {
      current = m[1].str();
      out[current].found = true;
    } else if (current.empty()) {
      continue;
    } else if (line.find("stack frame") != std::string::npos) {
      ResourceUsage& r = out[current];
      r.stack_frame_bytes = match_int(line, kStack);
      r.spill_store_bytes = match_int(line, kSpillSt);
      r.spill_load_bytes = match_int(line, kSpillLd);
    } else if (line.find("Used ") != std::string::npos &&
               line.find("registers") != std::string::npos) {
      ResourceUsage& r = out[current];
      r.registers = match_int(line, kRegs);
      r.barriers = match_int(line, kBarriers);
      r.shared_bytes = match_int(line, kSmem);
      r.const_bytes = match_int(line, kCmem);
    }
  }
  return out;
}

}  // namespace ssmtune::jit
