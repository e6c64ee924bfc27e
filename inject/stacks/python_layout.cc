#include "stacks/python_layout.h"

namespace trainprof::inject::stacks {

namespace {

// CPython 3.11 (offsets from the headers named in python_layout.h; checked with offsetof against
// 3.11.2 and 3.11.7).
constexpr PyLayout k311{
    .minor = 11,
    .runtime_tss = 592,  // _PyRuntime.gilstate.autoTSSkey (gilstate at 568)
    // PyThreadState: cframe, thread_id, datastack_chunk, datastack_top; bytes read.
    .ts_cframe = 56, .ts_thread_id = 152, .ts_datastack_chunk = 296, .ts_datastack_top = 304, .ts_read = 312,
    .cframe_current_frame = 8,  // after uint8_t use_tracing
    .chunk_previous = 0, .chunk_size = 8, .chunk_top = 16, .chunk_data = 24,
    // _PyInterpreterFrame: f_code, previous, prev_instr, owner; localsplus at 72.
    .frame_code = 32, .frame_previous = 48, .frame_prev_instr = 56, .frame_owner = 69, .frame_header = 72,
    .owner_generator = 1, .owner_cstack = -1,
    // PyCodeObject (_PyCode_DEF).
    .code_firstlineno = 72, .code_filename = 112, .code_qualname = 128, .code_linetable = 136,
    .code_firsttraceable = 168, .code_adaptive = 184,
    // str: 3.11 still has `wchar_t *wstr` in PyASCIIObject (48 bytes); PyCompactUnicodeObject 72.
    .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_utf8_length = 48, .str_utf8 = 56,
    .str_compact_size = 72,
};

}  // namespace

const PyLayout* PyLayoutFor(unsigned long version_hex) {
  const unsigned long major = (version_hex >> 24) & 0xFF, minor = (version_hex >> 16) & 0xFF;
  if (major == 3 && minor == 11) return &k311;
  return nullptr;
}

}  // namespace trainprof::inject::stacks
