// The sampler's layout table for one CPython version (inject/stacks/python_layout.h) against
// offsetof in that version's own headers (py_layout_headers.c, compiled with them): one test
// program per interpreter the build machine has (CMakeLists.txt beside this file).
#include <gtest/gtest.h>

#include "py_layout_headers.h"
#include "stacks/python_layout.h"

namespace trainprof::inject::stacks {
namespace {

TEST(PyLayoutHeaders, TableIsTheHeadersOffsets) {
  TpPyHeaders h{};
  TpReadPyHeaders(&h);
  const PyLayout* l = PyLayoutFor(h.version_hex);
  ASSERT_NE(l, nullptr) << "no layout for PY_VERSION_HEX " << std::hex << h.version_hex;
  EXPECT_EQ(l->minor, (h.version_hex >> 16) & 0xFF);
  EXPECT_EQ(l->chain, h.frame_objects ? PyFrameChain::kFrameObjects
                      : h.cframe     ? PyFrameChain::kCFrame
                                     : PyFrameChain::kThreadState);
  EXPECT_EQ(l->runtime_tss, h.runtime_tss);
  EXPECT_EQ(h.tss_key, 4u);  // the walk reads the key at runtime_tss + 4
  EXPECT_EQ(l->ts_frame, h.ts_frame);
  EXPECT_EQ(l->ts_thread_id, h.ts_thread_id);
  EXPECT_EQ(l->ts_datastack_chunk, h.ts_datastack_chunk);
  EXPECT_EQ(l->ts_datastack_top, h.ts_datastack_top);
  for (size_t end : {h.ts_frame, h.ts_thread_id, h.ts_datastack_chunk, h.ts_datastack_top}) {
    EXPECT_GE(l->ts_read, end + 8);
  }
  EXPECT_EQ(l->cframe_current_frame, h.cframe_current_frame);
  EXPECT_EQ(l->chunk_previous, h.chunk_previous);
  EXPECT_EQ(l->chunk_size, h.chunk_size);
  EXPECT_EQ(l->chunk_top, h.chunk_top);
  EXPECT_EQ(l->chunk_data, h.chunk_data);
  EXPECT_EQ(l->frame_code, h.frame_code);
  EXPECT_EQ(l->frame_previous, h.frame_previous);
  EXPECT_EQ(l->frame_instr, h.frame_instr);
  EXPECT_EQ(l->frame_owner, h.frame_owner);
  EXPECT_EQ(l->frame_trace, h.frame_trace);
  EXPECT_EQ(l->frame_lineno, h.frame_lineno);
  EXPECT_EQ(l->frame_header, h.frame_end);
  if (!h.frame_objects) EXPECT_EQ(l->owner_generator, h.owner_generator);
  EXPECT_EQ(l->owner_shim, h.owner_shim);
  EXPECT_EQ(l->code_firstlineno, h.code_firstlineno);
  EXPECT_EQ(l->code_filename, h.code_filename);
  EXPECT_EQ(l->code_linetable, h.code_linetable);
  EXPECT_EQ(l->code_qualname, h.code_qualname);
  EXPECT_EQ(l->code_firsttraceable, h.code_firsttraceable);
  EXPECT_EQ(l->code_adaptive, h.code_adaptive);
  EXPECT_EQ(l->code_code, h.code_code);
  EXPECT_EQ(l->code_version, h.code_version);
  if (h.code_version != 0) {
    EXPECT_EQ(h.code_version_size, 4u);  // the walk reads a uint32_t
  }
  EXPECT_EQ(l->str_length, h.str_length);
  EXPECT_EQ(l->str_state, h.str_state);
  EXPECT_EQ(l->str_ascii_size, h.str_ascii_size);
  EXPECT_EQ(l->str_utf8_length, h.str_utf8_length);
  EXPECT_EQ(l->str_utf8, h.str_utf8);
  EXPECT_EQ(l->str_compact_size, h.str_compact_size);
  // What the walk assumes of every version (python_async_walk.cc: ob_type at 8, ob_size at 16,
  // a bytes object's data at 32).
  EXPECT_EQ(h.bytes_size, 16u);
  EXPECT_EQ(h.bytes_sval, 32u);
}

}  // namespace
}  // namespace trainprof::inject::stacks
