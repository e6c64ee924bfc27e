#include "cupti/cupti_api.h"

#include <dlfcn.h>

namespace trainprof::inject::cupti {
namespace {

template <typename F>
bool Resolve(void* lib, F* slot, const char* name, const char** missing) {
  *slot = reinterpret_cast<F>(dlsym(lib, name));
  if (*slot == nullptr && missing != nullptr && *missing == nullptr) *missing = name;
  return *slot != nullptr;
}

}  // namespace

bool ResolveCuptiApi(void* lib, CuptiApi* api, const char** missing) {
  *api = CuptiApi{};
  *missing = nullptr;
  bool ok = true;
  ok &= Resolve(lib, &api->GetVersion, "cuptiGetVersion", missing);
  ok &= Resolve(lib, &api->GetResultString, "cuptiGetResultString", missing);
  ok &= Resolve(lib, &api->Subscribe, "cuptiSubscribe", missing);
  ok &= Resolve(lib, &api->Unsubscribe, "cuptiUnsubscribe", missing);
  ok &= Resolve(lib, &api->EnableDomain, "cuptiEnableDomain", missing);
  ok &= Resolve(lib, &api->ActivityEnable, "cuptiActivityEnable", missing);
  ok &= Resolve(lib, &api->ActivityDisable, "cuptiActivityDisable", missing);
  ok &= Resolve(lib, &api->ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", missing);
  ok &= Resolve(lib, &api->ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", missing);
  ok &= Resolve(lib, &api->ActivityGetNextRecord, "cuptiActivityGetNextRecord", missing);
  ok &= Resolve(lib, &api->ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", missing);
  ok &= Resolve(lib, &api->ActivityFlushAll, "cuptiActivityFlushAll", missing);
  Resolve(lib, &api->SubscribeV2, "cuptiSubscribe_v2", nullptr);
  return ok;
}

const char* ResultName(const CuptiApi& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(r, &s) == CUPTI_SUCCESS && s != nullptr) return s;
  return "(unknown CUPTI result)";
}

bool CuptiVersionSupported(uint32_t version) {
  // Versions: 18 = CUDA 11.8, 19..28 = CUDA 12.x, then xxyyzz (130000 = CUDA 13.0).
  constexpr uint32_t kBuiltMajor = CUPTI_API_VERSION >= 10000 ? CUPTI_API_VERSION / 10000 : 12;
  if (version < 18) return false;
  uint32_t major = version >= 10000 ? version / 10000 : (version >= 19 ? 12 : 11);
  return major <= kBuiltMajor;
}

}  // namespace trainprof::inject::cupti
