// The structures of ittnotify's collector interface (Intel ITT API 3.x: ittnotify.h and
// ittnotify_config.h, laid out from their documentation): what ittnotify's static part (linked
// into PyTorch) hands a collector's __itt_api_init. Used by inject/itt_collector.cc and by the
// test program that plays the static part (tests/programs/itt_static.cc). Header-only, no code.
#pragma once

#include <pthread.h>

namespace trainprof::itt {

struct IttDomain {
  volatile int flag;  // the ITT macros call into the collector only when this is non-zero
  const char* nameA;
  void* nameW;
  int extra1;
  void* extra2;
  IttDomain* next;
};
struct IttStringHandle {
  const char* strA;
  void* strW;
  int extra1;  // ours: the string id
  void* extra2;
  IttStringHandle* next;
};
struct IttId {  // __itt_id, passed by value
  unsigned long long d1, d2, d3;
};
struct IttApiInfo {
  const char* name;
  void** func_ptr;
  void* init_func;
  void* null_func;
  int group;
};
struct IttGlobal {
  unsigned char magic[8];
  unsigned long version_major;
  unsigned long version_minor;
  unsigned long version_build;
  volatile long api_initialized;
  volatile long mutex_initialized;
  volatile long atomic_counter;
  pthread_mutex_t mutex;
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  IttApiInfo* api_list_ptr;
  IttGlobal* next;
  void* thread_list;
  IttDomain* domain_list;
  IttStringHandle* string_list;
};
constexpr unsigned char kIttMagic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};

}  // namespace trainprof::itt
