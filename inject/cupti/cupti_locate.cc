#include "cupti/cupti_locate.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace trainprof::inject::cupti {
namespace {

// Appends a candidate made of up to three parts; skipped when it does not fit.
void Add(char (*out)[kPathMax], int max, int* n, const char* a, const char* b = "", const char* c = "") {
  if (*n >= max || a == nullptr || *a == '\0') return;
  int len = snprintf(out[*n], kPathMax, "%s%s%s", a, b, c);
  if (len > 0 && static_cast<size_t>(len) < kPathMax) ++*n;
}

// The folder of `path` with its trailing '/', in buf; false if it has none.
bool Folder(const char* path, char* buf, size_t cap) {
  const char* slash = strrchr(path, '/');
  if (slash == nullptr) return false;
  size_t n = static_cast<size_t>(slash - path) + 1;
  if (n >= cap) return false;
  memcpy(buf, path, n);
  buf[n] = '\0';
  return true;
}

struct Loaded {
  char cupti[kPathMax] = {};
  char cudart[kPathMax] = {};
};

int FindLoaded(dl_phdr_info* info, size_t, void* arg) {
  auto* l = static_cast<Loaded*>(arg);
  const char* name = info->dlpi_name;
  if (name == nullptr || *name == '\0') return 0;
  const char* base = strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (l->cupti[0] == '\0' && strncmp(base, "libcupti.so", 11) == 0) snprintf(l->cupti, kPathMax, "%s", name);
  if (l->cudart[0] == '\0' && strncmp(base, "libcudart.so", 12) == 0) snprintf(l->cudart, kPathMax, "%s", name);
  return 0;
}

bool IsDirectory(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// The libcupti file to load from folder `dir` (with or without a trailing '/'), in `file`.
bool FileInFolder(const char* dir, int major, char* file) {
  const char* sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
  if (major > 0) {
    snprintf(file, kPathMax, "%s%slibcupti.so.%d", dir, sep, major);
    if (access(file, F_OK) == 0) return true;
  }
  snprintf(file, kPathMax, "%s%slibcupti.so", dir, sep);
  if (access(file, F_OK) == 0) return true;
  DIR* d = opendir(dir);
  if (d == nullptr) return false;
  char best[256] = {};
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "libcupti.so.", 12) != 0 || strlen(e->d_name) >= sizeof(best)) continue;
    if (best[0] == '\0' || strverscmp(e->d_name, best) > 0) snprintf(best, sizeof(best), "%s", e->d_name);
  }
  closedir(d);
  if (best[0] == '\0') return false;
  snprintf(file, kPathMax, "%s%s%s", dir, sep, best);
  return true;
}

}  // namespace

int SonameMajor(const char* path) {
  if (path == nullptr) return 0;
  const char* so = strstr(path, ".so.");
  if (so == nullptr) return 0;
  return atoi(so + 4);
}

int CuptiCandidates(const LocateInputs& in, char (*out)[kPathMax], int max) {
  int n = 0;
  Add(out, max, &n, in.loaded_cupti);
  if (in.override_path != nullptr && *in.override_path != '\0') {
    Add(out, max, &n, in.override_path);
    return n;
  }
  char dir[kPathMax];
  if (in.cudart != nullptr && Folder(in.cudart, dir, sizeof(dir))) {
    Add(out, max, &n, dir);
    Add(out, max, &n, dir, "../../cuda_cupti/lib/");
    Add(out, max, &n, dir, "../extras/CUPTI/lib64/");
  }
  const char* homes[] = {in.cuda_home, "/usr/local/cuda"};
  for (const char* home : homes) {
    if (home == nullptr || *home == '\0') continue;
    const char* sep = home[strlen(home) - 1] == '/' ? "" : "/";
    Add(out, max, &n, home, sep, "lib64/");
    Add(out, max, &n, home, sep, "lib/");
    Add(out, max, &n, home, sep, "extras/CUPTI/lib64/");
  }
  int major = SonameMajor(in.cudart);
  if (major > 0) {
    char name[32];
    snprintf(name, sizeof(name), "libcupti.so.%d", major);
    Add(out, max, &n, name);
  }
  Add(out, max, &n, "libcupti.so");
  return n;
}

void* OpenCupti(const char* override_path, const char* cuda_home, char* loaded, char* why, size_t why_size) {
  static Loaded found;  // once per process (InitializeInjection), and too big for a small stack
  found = Loaded{};
  dl_iterate_phdr(FindLoaded, &found);
  LocateInputs in;
  in.loaded_cupti = found.cupti[0] != '\0' ? found.cupti : nullptr;
  in.cudart = found.cudart[0] != '\0' ? found.cudart : nullptr;
  in.override_path = override_path;
  in.cuda_home = cuda_home;
  static char candidates[kMaxCandidates][kPathMax];
  int n = CuptiCandidates(in, candidates, kMaxCandidates);
  const int major = SonameMajor(in.cudart);
  why[0] = '\0';
  char file[kPathMax];
  for (int i = 0; i < n; ++i) {
    const char* c = candidates[i];
    const bool bare = strchr(c, '/') == nullptr;
    const bool is_override = override_path != nullptr && c != nullptr && strcmp(c, override_path) == 0;
    if (bare) {
      snprintf(file, sizeof(file), "%s", c);
    } else if (c[strlen(c) - 1] == '/' || IsDirectory(c)) {
      if (!FileInFolder(c, major, file)) {
        if (is_override) snprintf(why, why_size, "TRAINPROF_CUPTI_PATH=%s: no libcupti.so* in that folder", c);
        continue;
      }
    } else {
      snprintf(file, sizeof(file), "%s", c);
      if (access(file, F_OK) != 0) {
        if (is_override) snprintf(why, why_size, "TRAINPROF_CUPTI_PATH=%s: no such file", c);
        continue;
      }
    }
    dlerror();
    void* h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      snprintf(loaded, kPathMax, "%s", file);
      return h;
    }
    // Found but not loadable (wrong architecture, a missing dependency): say so, keep looking.
    if (why[0] == '\0' && !bare) {
      const char* e = dlerror();
      snprintf(why, why_size, "%s%s: %s", is_override ? "TRAINPROF_CUPTI_PATH=" : "", file,
               e != nullptr ? e : "cannot be loaded");
    }
  }
  if (why[0] == '\0') {
    snprintf(why, why_size,
             "no libcupti found (beside the CUDA runtime%s, in %s/usr/local/cuda, or on the loader's "
             "path); set TRAINPROF_CUPTI_PATH to it",
             in.cudart != nullptr ? "" : ", which is not loaded as a shared library",
             cuda_home != nullptr ? "CUDA_HOME, " : "");
  }
  return nullptr;
}

}  // namespace trainprof::inject::cupti
