#include "proc_table.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace trainprof::launcher {

std::vector<ProcEntry> ReadProcTable() {
  std::vector<ProcEntry> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE* f = fopen(path, "re");
    if (f == nullptr) continue;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char* rp = strrchr(buf, ')');
    char state;
    long ppid;
    if (rp != nullptr && sscanf(rp + 1, " %c %ld", &state, &ppid) == 2) {
      out.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(ppid), state});
    }
  }
  closedir(d);
  return out;
}

}  // namespace trainprof::launcher
