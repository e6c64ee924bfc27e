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
  bool ok = Find(lookup, "PyThreadState_GetUnchecked", &a.thread_state) ||
            Find(lookup, "_PyThreadState_UncheckedGet", &a.thread_state);
  ok &= Find(lookup, "PyGILState_Check", &a.gil_check);
  ok &= Find(lookup, "PyGILState_GetThisThreadState", &a.this_thread_state);
  ok &= Find(lookup, "PyThreadState_GetFrame", &a.thread_frame);
  ok &= Find(lookup, "PyFrame_GetBack", &a.frame_back);
  ok &= Find(lookup, "PyFrame_GetCode", &a.frame_code);
  ok &= Find(lookup, "PyFrame_GetLineNumber", &a.frame_line);
  Find(lookup, "PyFrame_GetLasti", &a.frame_lasti);  // optional (3.11+)
  ok &= Find(lookup, "PyObject_GetAttrString", &a.get_attr);
  ok &= Find(lookup, "PyUnicode_AsUTF8AndSize", &a.utf8);
  ok &= Find(lookup, "PyErr_Fetch", &a.err_fetch);
  ok &= Find(lookup, "PyErr_Restore", &a.err_restore);
  ok &= Find(lookup, "PyGC_Disable", &a.gc_disable);
  ok &= Find(lookup, "PyGC_Enable", &a.gc_enable);
  ok &= Find(lookup, "Py_IncRef", &a.incref);
  ok &= Find(lookup, "Py_DecRef", &a.decref);
  a.ok = ok;
  return a;
}

}  // namespace trainprof::inject::stacks
