/* offsetof in one CPython version's own headers (Py_BUILD_CORE for the internal ones): see
 * py_layout_headers.h. Built with -I of that version's include directory. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>

#include "internal/pycore_runtime.h"
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#endif

#include "py_layout_headers.h"

#if defined(Py_GIL_DISABLED) || defined(Py_DEBUG)
#error "a free-threaded or debug build's headers: the sampler has no layout for those"
#endif

void TpReadPyHeaders(struct TpPyHeaders* o) {
  o->version_hex = PY_VERSION_HEX;
#if PY_MINOR_VERSION >= 12
  o->runtime_tss = offsetof(_PyRuntimeState, autoTSSkey);
#else
  o->runtime_tss = offsetof(_PyRuntimeState, gilstate.autoTSSkey);
#endif
  o->tss_key = offsetof(Py_tss_t, _key);
  o->ts_thread_id = offsetof(PyThreadState, thread_id);
  o->str_length = offsetof(PyASCIIObject, length);
  o->str_state = offsetof(PyASCIIObject, state);
  o->str_ascii_size = sizeof(PyASCIIObject);
  o->str_utf8_length = offsetof(PyCompactUnicodeObject, utf8_length);
  o->str_utf8 = offsetof(PyCompactUnicodeObject, utf8);
  o->str_compact_size = sizeof(PyCompactUnicodeObject);
  o->bytes_size = offsetof(PyVarObject, ob_size);
  o->bytes_sval = offsetof(PyBytesObject, ob_sval);
  o->code_firstlineno = offsetof(PyCodeObject, co_firstlineno);
  o->code_filename = offsetof(PyCodeObject, co_filename);
  o->code_linetable = offsetof(PyCodeObject, co_linetable);
  o->owner_shim = 256;
#if PY_MINOR_VERSION == 10
  o->frame_objects = 1;
  o->ts_frame = offsetof(PyThreadState, frame);
  o->frame_code = offsetof(PyFrameObject, f_code);
  o->frame_previous = offsetof(PyFrameObject, f_back);
  o->frame_instr = offsetof(PyFrameObject, f_lasti);
  o->frame_trace = offsetof(PyFrameObject, f_trace);
  o->frame_lineno = offsetof(PyFrameObject, f_lineno);
  o->frame_end = offsetof(PyFrameObject, f_lineno) + sizeof(int);
  o->code_qualname = offsetof(PyCodeObject, co_name);
  o->code_code = offsetof(PyCodeObject, co_code);
#else
#if PY_MINOR_VERSION <= 12
  o->cframe = 1;
  o->ts_frame = offsetof(PyThreadState, cframe);
  o->cframe_current_frame = offsetof(_PyCFrame, current_frame);
#else
  o->ts_frame = offsetof(PyThreadState, current_frame);
#endif
  o->ts_datastack_chunk = offsetof(PyThreadState, datastack_chunk);
  o->ts_datastack_top = offsetof(PyThreadState, datastack_top);
  o->chunk_previous = offsetof(_PyStackChunk, previous);
  o->chunk_size = offsetof(_PyStackChunk, size);
  o->chunk_top = offsetof(_PyStackChunk, top);
  o->chunk_data = offsetof(_PyStackChunk, data);
#if PY_MINOR_VERSION >= 13
  o->frame_code = offsetof(_PyInterpreterFrame, f_executable);
  o->frame_instr = offsetof(_PyInterpreterFrame, instr_ptr);
#else
  o->frame_code = offsetof(_PyInterpreterFrame, f_code);
  o->frame_instr = offsetof(_PyInterpreterFrame, prev_instr);
#endif
  o->frame_previous = offsetof(_PyInterpreterFrame, previous);
  o->frame_owner = offsetof(_PyInterpreterFrame, owner);
  o->frame_end = offsetof(_PyInterpreterFrame, localsplus);
  o->owner_generator = FRAME_OWNED_BY_GENERATOR;
#if PY_MINOR_VERSION >= 12
  o->owner_shim = FRAME_OWNED_BY_CSTACK;
#endif
  o->code_qualname = offsetof(PyCodeObject, co_qualname);
  o->code_firsttraceable = offsetof(PyCodeObject, _co_firsttraceable);
  o->code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
#endif
#if PY_MINOR_VERSION >= 12
  o->code_version = offsetof(PyCodeObject, co_version);
  o->code_version_size = sizeof(((PyCodeObject*)0)->co_version);
#endif
}
