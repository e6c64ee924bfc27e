// Plays ittnotify's static part as PyTorch links it (the ITT "collector interface" of ittnotify.h /
// ittnotify_config.h; the layouts of inject/itt_layout.h): a global with its function table,
// a domain "PyTorch" created before the collector is loaded (flag 0), then, like ittnotify's first
// call, dlopen(INTEL_LIBITTNOTIFY64) and its __itt_api_init. Then operators as
// torch/csrc/itt_wrapper.cpp emits them: string handle, task_begin, task_end.
//
//   tp_itt_static N     N × {aten::outer { aten::inner }} on the PyTorch domain, 7 tasks on a
//                       domain "other" (ignored by the collector), then a fork child doing N/2 more
//                       (and the parent waits for it). Prints "collector: installed" or "not installed".
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "itt_layout.h"

namespace {

using Domain = trainprof::itt::IttDomain;
using StringHandle = trainprof::itt::IttStringHandle;
using Id = trainprof::itt::IttId;
using ApiInfo = trainprof::itt::IttApiInfo;
using Global = trainprof::itt::IttGlobal;

using DomainCreate = Domain* (*)(const char*);
using HandleCreate = StringHandle* (*)(const char*);
using TaskBegin = void (*)(const Domain*, Id, Id, StringHandle*);
using TaskEnd = void (*)(const Domain*);

Domain* NoDomain(const char*) { return nullptr; }
StringHandle* NoHandle(const char*) { return nullptr; }
void NoBegin(const Domain*, Id, Id, StringHandle*) {}
void NoEnd(const Domain*) {}

DomainCreate domain_create = NoDomain;
HandleCreate handle_create = NoHandle;
TaskBegin task_begin = NoBegin;
TaskEnd task_end = NoEnd;

ApiInfo api_list[] = {{"__itt_domain_create", reinterpret_cast<void**>(&domain_create), nullptr, nullptr, 0},
                      {"__itt_string_handle_create", reinterpret_cast<void**>(&handle_create), nullptr, nullptr, 0},
                      {"__itt_task_begin", reinterpret_cast<void**>(&task_begin), nullptr, nullptr, 0},
                      {"__itt_task_end", reinterpret_cast<void**>(&task_end), nullptr, nullptr, 0},
                      {nullptr, nullptr, nullptr, nullptr, 0}};
Domain pytorch{0, "PyTorch", nullptr, 0, nullptr, nullptr};
Global MakeGlobal() {
  Global g{};
  memcpy(g.magic, trainprof::itt::kIttMagic, sizeof(g.magic));
  g.version_major = 3;
  g.mutex = PTHREAD_MUTEX_INITIALIZER;
  g.api_list_ptr = api_list;
  g.domain_list = &pytorch;
  return g;
}
Global global = MakeGlobal();

void Spin(long ns) {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

// Like itt_range_push / itt_range_pop, with the macros' flag check.
void Op(const Domain* d, const char* name, long spin_ns, const char* inner) {
  if (d == nullptr || !d->flag) return;
  task_begin(d, Id{}, Id{}, handle_create(name));
  Spin(spin_ns);
  if (inner != nullptr) Op(d, inner, spin_ns, nullptr);
  task_end(d);
}

void Ops(int n, const Domain* other) {
  for (int i = 0; i < n; ++i) Op(&pytorch, "aten::outer", 20000, "aten::inner");
  for (int i = 0; i < 7; ++i) {  // the macros skip a domain with flag 0; a direct call must be ignored too
    task_begin(other, Id{}, Id{}, handle_create("other::task"));
    task_end(other);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 10;
  const char* lib = getenv("INTEL_LIBITTNOTIFY64");
  if (lib != nullptr) {
    void* h = dlopen(lib, RTLD_LAZY);
    auto init = h != nullptr ? reinterpret_cast<void (*)(void*, int)>(dlsym(h, "__itt_api_init")) : nullptr;
    if (init != nullptr) init(&global, -1);
  }
  global.api_initialized = 1;
  const bool installed = task_begin != NoBegin;
  printf("collector: %s, PyTorch domain flag %d\n", installed ? "installed" : "not installed", pytorch.flag);
  Domain* other = domain_create("other");
  if (installed && (other == nullptr || other->flag != 0 || domain_create("PyTorch")->flag != 1)) {
    printf("wrong domains\n");
    return 1;
  }
  if (other == nullptr) other = &pytorch;  // nothing installed: no calls go anywhere
  Ops(n, other);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    Ops(n / 2, other);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
