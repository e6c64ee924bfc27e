// The buffers CUPTI fills with activity records. CUPTI asks for one and hands it back full on its
// own threads (or on the thread that flushes), never on a program thread's API call: allocation
// and a mutex are fine here. At most kMaxBuffers of kBufferBytes exist (allocated on first need,
// then reused); when all are out, the request is declined and CUPTI drops records, which it counts
// and we write as GPU_DROPPED.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace trainprof::inject::cupti {

class BufferPool {
 public:
  static constexpr size_t kBufferBytes = 4u << 20;
  static constexpr int kMaxBuffers = 16;  // 64 MiB at most, a few MiB in practice

  /// A free buffer of kBufferBytes (8-byte aligned), or nullptr when all are in use or memory is
  /// short.
  uint8_t* Acquire();
  /// Gives a buffer from Acquire back (nullptr is ignored).
  void Release(uint8_t* buffer);
  /// Buffers allocated so far.
  int allocated() const;

 private:
  mutable pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  uint8_t* free_[kMaxBuffers] = {};
  int free_count_ = 0;
  int allocated_ = 0;
};

}  // namespace trainprof::inject::cupti
