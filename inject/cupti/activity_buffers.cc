#include "cupti/activity_buffers.h"

#include <cstdlib>

namespace trainprof::inject::cupti {

uint8_t* BufferPool::Acquire() {
  pthread_mutex_lock(&mu_);
  uint8_t* b = nullptr;
  if (free_count_ > 0) {
    b = free_[--free_count_];
  } else if (allocated_ < kMaxBuffers) {
    b = static_cast<uint8_t*>(aligned_alloc(64, kBufferBytes));
    if (b != nullptr) ++allocated_;
  }
  pthread_mutex_unlock(&mu_);
  return b;
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  pthread_mutex_lock(&mu_);
  if (free_count_ < kMaxBuffers) {
    free_[free_count_++] = buffer;
    buffer = nullptr;
  }
  pthread_mutex_unlock(&mu_);
  free(buffer);  // not one of ours (cannot happen): do not keep it
}

int BufferPool::allocated() const {
  pthread_mutex_lock(&mu_);
  int n = allocated_;
  pthread_mutex_unlock(&mu_);
  return n;
}

}  // namespace trainprof::inject::cupti
