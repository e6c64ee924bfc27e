/* The offsets the sampler's layout tables (inject/stacks/python_layout.h) hold, as a C compiler
 * sees them in one CPython version's own headers (py_layout_headers.c, built per interpreter
 * found: tests/unit/py_layout/CMakeLists.txt). */
#ifndef TRAINPROF_PY_LAYOUT_HEADERS_H
#define TRAINPROF_PY_LAYOUT_HEADERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct TpPyHeaders {
  unsigned long version_hex; /* PY_VERSION_HEX */
  int frame_objects;         /* 3.10: PyFrameObject frames */
  int cframe;                /* 3.11, 3.12: PyThreadState.cframe */
  size_t runtime_tss, tss_key;
  size_t ts_frame, ts_thread_id, ts_datastack_chunk, ts_datastack_top;
  size_t cframe_current_frame;
  size_t chunk_previous, chunk_size, chunk_top, chunk_data;
  size_t frame_code, frame_previous, frame_instr, frame_owner, frame_trace, frame_lineno, frame_end;
  int owner_generator, owner_shim; /* owner_shim: FRAME_OWNED_BY_CSTACK, 256 when none */
  size_t code_firstlineno, code_filename, code_linetable, code_qualname, code_firsttraceable, code_adaptive,
      code_code;
  size_t code_version, code_version_size; /* co_version (3.12+; 0: none) and its size in bytes */
  size_t str_length, str_state, str_ascii_size, str_utf8_length, str_utf8, str_compact_size;
  size_t bytes_size, bytes_sval;
};

/** Fills *out from the headers py_layout_headers.c was compiled with. */
void TpReadPyHeaders(struct TpPyHeaders* out);

#ifdef __cplusplus
}
#endif

#endif
