#include "stacks/python_walk.h"

#include <cstring>

#include "trainprof/trace_format.h"

namespace trainprof::inject::stacks {

namespace {

size_t SlotOf(const void* code) {
  uint64_t h = reinterpret_cast<uintptr_t>(code) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 52);  // 12 bits: kSlots
}

/// UTF-8 of a str attribute of `object` interned, or 0. Leaves no exception set.
uint32_t InternAttr(const PyApi& api, InternFn intern, void* ctx, void* object, const char* name,
                    const char** bytes = nullptr, size_t* len = nullptr) {
  void* s = api.get_attr(object, name);
  if (s == nullptr) return 0;
  ssize_t n = 0;
  const char* u = api.utf8(s, &n);
  uint32_t id = 0;
  if (u != nullptr && n >= 0) {
    size_t m = static_cast<size_t>(n);
    if (m > format::kMaxStringBytes) {
      m = format::kMaxStringBytes;
      while (m > 0 && (static_cast<unsigned char>(u[m]) & 0xC0) == 0x80) --m;  // whole characters
    }
    id = intern(ctx, u, static_cast<uint32_t>(m));
    if (bytes != nullptr) {
      *bytes = u;
      *len = m;
    }
  }
  api.decref(s);  // the str stays alive in the code object: `bytes` stays valid for the caller
  return id;
}

}  // namespace

bool IsOwnPythonFile(const char* file, size_t n) {
  static constexpr char kOwn[] = "/_trainprof/";
  constexpr size_t k = sizeof(kOwn) - 1;
  for (size_t i = 0; i + k <= n; ++i) {
    if (memcmp(file + i, kOwn, k) == 0) return true;
  }
  // The shim's sitecustomize.py, in the folder `trainprof run` puts first on PYTHONPATH: always
  // named python/ (build/python, share/trainprof/python).
  static constexpr char kSite[] = "/python/sitecustomize.py";
  constexpr size_t s = sizeof(kSite) - 1;
  return n >= s && memcmp(file + n - s, kSite, s) == 0;
}

bool PythonWalker::LookUp(const PyApi& api, InternFn intern, void* ctx, void* code, Entry* e) {
  ++lookups_;
  // A pending exception (NVTX called while one propagates) is set aside; a failed lookup's own
  // is dropped.
  void *type = nullptr, *value = nullptr, *tb = nullptr;
  api.err_fetch(&type, &value, &tb);
  e->function = InternAttr(api, intern, ctx, code, "co_qualname");
  if (e->function == 0) {
    void *t2 = nullptr, *v2 = nullptr, *tb2 = nullptr;
    api.err_fetch(&t2, &v2, &tb2);  // 3.10 and older: no co_qualname
    api.decref(t2);
    api.decref(v2);
    api.decref(tb2);
    e->function = InternAttr(api, intern, ctx, code, "co_name");
  }
  const char* file = nullptr;
  size_t file_len = 0;
  e->file = InternAttr(api, intern, ctx, code, "co_filename", &file, &file_len);
  e->own = file != nullptr && IsOwnPythonFile(file, file_len);
  void *t3 = nullptr, *v3 = nullptr, *tb3 = nullptr;
  api.err_fetch(&t3, &v3, &tb3);
  api.decref(t3);
  api.decref(v3);
  api.decref(tb3);
  api.err_restore(type, value, tb);
  return e->function != 0 && e->file != 0;
}

PythonWalker::Entry* PythonWalker::Names(const PyApi& api, InternFn intern, void* ctx, void* code,
                                         bool use_cache, Entry* e, bool* ok) {
  *ok = true;
  if (!use_cache) {
    *ok = LookUp(api, intern, ctx, code, e);
    return nullptr;
  }
  size_t s = SlotOf(code);
  Entry* free_slot = nullptr;
  for (size_t i = 0; i < kProbe; ++i) {
    Entry& c = slots_[(s + i) & (kSlots - 1)];
    if (c.code == code) {
      *e = c;
      return &c;
    }
    if (c.code == nullptr) {
      free_slot = &c;
      break;
    }
  }
  if (!LookUp(api, intern, ctx, code, e)) {
    *ok = false;
    return nullptr;
  }
  if (free_slot == nullptr) return nullptr;
  api.incref(code);
  *free_slot = *e;
  free_slot->code = code;
  ++cached_;
  return free_slot;
}

int PythonWalker::Line(const PyApi& api, void* frame, Entry* cached) {
  int lasti = cached != nullptr && api.frame_lasti != nullptr ? api.frame_lasti(frame) : -1;
  if (lasti < 0) {
    ++line_lookups_;
    return api.frame_line(frame);
  }
  size_t k = static_cast<size_t>(lasti >> 1) % kLines;  // a byte offset: 2 bytes an instruction
  if (cached->lasti[k] == lasti) return cached->line[k];
  ++line_lookups_;
  int line = api.frame_line(frame);
  cached->lasti[k] = lasti;
  cached->line[k] = line;
  return line;
}

size_t PythonWalker::Capture(const PyApi& api, InternFn intern, void* ctx, const void* epoch,
                             uint64_t* out, size_t max_values, bool* cut) {
  if (cut != nullptr) *cut = false;
  if (!api.ok || max_values < kValuesPerPythonFrame) return 0;
  void* tstate = api.thread_state();
  // Not initialised, another thread's state (3.11: the GIL holder's), or no GIL here.
  if (tstate == nullptr || tstate != api.this_thread_state() || api.gil_check() == 0) return 0;
  bool use_cache = !busy_.test_and_set(std::memory_order_acquire);
  if (use_cache && epoch != epoch_) {
    // Another string table (a fork child's): ids are per trace file. The references the old
    // entries hold are kept (a code object outliving its use costs nothing).
    for (Entry& c : slots_) c = Entry{};
    cached_ = 0;
    epoch_ = epoch;
  }
  int gc_was_on = api.gc_disable();
  size_t n = 0, frames = 0;
  void* frame = api.thread_frame(tstate);
  while (frame != nullptr && frames < kMaxPythonFrames && n + kValuesPerPythonFrame <= max_values) {
    void* code = api.frame_code(frame);
    Entry e;
    bool ok = false;
    Entry* cached = code != nullptr ? Names(api, intern, ctx, code, use_cache, &e, &ok) : nullptr;
    if (ok && !e.own) {
      int line = Line(api, frame, cached);
      out[n++] = uint64_t{e.function} * 2 + 1;
      out[n++] = e.file;
      out[n++] = line > 0 ? static_cast<uint64_t>(line) : 0;
      ++frames;
    }
    api.decref(code);
    void* back = api.frame_back(frame);
    api.decref(frame);
    frame = back;
  }
  if (cut != nullptr) *cut = frame != nullptr;  // the walk stopped at its limit, frames remained
  api.decref(frame);
  if (gc_was_on) api.gc_enable();
  if (use_cache) busy_.clear(std::memory_order_release);
  return n;
}

}  // namespace trainprof::inject::stacks
