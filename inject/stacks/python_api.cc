#include "stacks/python_api.h"

#include <dlfcn.h>

namespace trainprof::inject::stacks {

namespace {

template <typename F>
bool Find(SymbolLookup lookup, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(lookup(name));
  return *fn != nullptr;
}

}  // namespace

void* DlsymDefault(const char* name) { return dlsym(RTLD_DEFAULT, name); }

PyApi ResolvePyApi(SymbolLookup lookup) {
  PyApi a;
  SymbolLookup l = lookup;
  Find(l, "PyFrame_GetLasti", &a.frame_lasti);  // optional (3.11+)
  // Thread state and GIL; frames; names; exceptions, the collector, references.
  a.ok = (Find(l, "PyThreadState_GetUnchecked", &a.thread_state) ||
          Find(l, "_PyThreadState_UncheckedGet", &a.thread_state)) &&
         Find(l, "PyGILState_Check", &a.gil_check) &&
         Find(l, "PyGILState_GetThisThreadState", &a.this_thread_state) &&
         Find(l, "PyThreadState_GetFrame", &a.thread_frame) && Find(l, "PyFrame_GetBack", &a.frame_back) &&
         Find(l, "PyFrame_GetCode", &a.frame_code) && Find(l, "PyFrame_GetLineNumber", &a.frame_line) &&
         Find(l, "PyObject_GetAttrString", &a.get_attr) && Find(l, "PyUnicode_AsUTF8AndSize", &a.utf8) &&
         Find(l, "PyErr_Fetch", &a.err_fetch) && Find(l, "PyErr_Restore", &a.err_restore) &&
         Find(l, "PyGC_Disable", &a.gc_disable) && Find(l, "PyGC_Enable", &a.gc_enable) &&
         Find(l, "Py_IncRef", &a.incref) && Find(l, "Py_DecRef", &a.decref);
  return a;
}

}  // namespace trainprof::inject::stacks
