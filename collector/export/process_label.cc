#include "collector/export/process_label.h"

namespace trainprof::collector {

std::string ProcessLabel(const Process& p) {
  std::string label;
  if (p.rank) {
    label = "rank " + std::to_string(*p.rank);
  } else if (!p.role.empty()) {
    label = p.role;
  }
  std::string cmd = ProcessCommand(p);
  if (!label.empty() && label != "main") cmd = label + ": " + cmd;
  return cmd;
}

std::string ProcessCommand(const Process& p) {
  std::string cmd;
  for (const std::string& a : p.first().argv) {
    if (!cmd.empty()) cmd += ' ';
    cmd += a;
    if (cmd.size() > 120) {
      cmd += "...";
      break;
    }
  }
  if (cmd.empty()) cmd = p.first().executable;
  return cmd;
}

}  // namespace trainprof::collector
