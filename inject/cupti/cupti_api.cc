#include "cupti/cupti_api.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

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
#define TRAINPROF_CUPTI_RESOLVE(member, function) ok &= Resolve(lib, &api->member, #function, missing);
  TRAINPROF_CUPTI_REQUIRED(TRAINPROF_CUPTI_RESOLVE)
#undef TRAINPROF_CUPTI_RESOLVE
  Resolve(lib, &api->SubscribeV2, "cuptiSubscribe_v2", nullptr);
  return ok;
}

namespace {

// CUpti_SubscriberParams as CUPTI 13.2 extends it: allowMultipleSubscribers follows
// oldSubscriberSize. Headers older than 13.2 (CUDA 13.0's) lack the field.
#if CUPTI_API_VERSION >= 130200
using SubscriberParams = CUpti_SubscriberParams;
constexpr size_t kParamsSizeMultiple = CUPTI_CALLBACK_STRUCT_SIZE(CUpti_SubscriberParams, allowMultipleSubscribers);
inline uint8_t* AllowMultiple(SubscriberParams* p) { return &p->allowMultipleSubscribers; }
inline CUpti_SubscriberParams* Base(SubscriberParams* p) { return p; }
#else
struct SubscriberParams {
  CUpti_SubscriberParams base;
  uint8_t allowMultipleSubscribers;
};
static_assert(offsetof(SubscriberParams, allowMultipleSubscribers) == sizeof(CUpti_SubscriberParams) &&
                  sizeof(CUpti_SubscriberParams) == CUpti_SubscriberParams_STRUCT_SIZE,
              "allowMultipleSubscribers follows oldSubscriberSize directly");
constexpr size_t kParamsSizeMultiple = offsetof(SubscriberParams, allowMultipleSubscribers) + 1;
inline uint8_t* AllowMultiple(SubscriberParams* p) { return &p->allowMultipleSubscribers; }
inline CUpti_SubscriberParams* Base(SubscriberParams* p) { return &p->base; }
#endif

}  // namespace

CUptiResult SubscribeAsTrainprof(const CuptiApi& api, uint32_t version, CUpti_SubscriberHandle* subscriber,
                                 CUpti_CallbackFunc callback, char* other, size_t other_size, bool* multiple) {
  *multiple = false;
  if (other_size > 0) other[0] = '\0';
  if (api.SubscribeV2 == nullptr) return api.Subscribe(subscriber, callback, nullptr);
  SubscriberParams params;
  memset(&params, 0, sizeof(params));
  CUpti_SubscriberParams* p = Base(&params);
  // CUPTI reads only the fields structSize covers: an older CUPTI never sees the flag.
  p->structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  if (version >= kMultipleSubscribersVersion) {
    p->structSize = kParamsSizeMultiple;
    *AllowMultiple(&params) = 1;
    *multiple = true;
  }
  p->subscriberName = "trainprof";
  p->oldSubscriberName = other_size >= CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN ? other : nullptr;
  p->oldSubscriberSize = other_size >= CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN ? other_size : 0;
  return api.SubscribeV2(subscriber, callback, nullptr, p);
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
