// Our background thread that asks CUPTI for finished activity buffers every interval, so a
// process that is killed loses at most the last interval of GPU activity. It blocks every signal
// (the program's handlers never run on it) and is named "trainprof-gpu". It exists only in the
// process that started it: a fork() child has no copy of it, and Stop() there does nothing.
#pragma once

#include <pthread.h>
#include <sys/types.h>

namespace trainprof::inject::cupti {

class FlushThread {
 public:
  /// Starts calling `tick` every interval_ms. Returns false if the thread cannot be created.
  bool Start(unsigned interval_ms, void (*tick)());
  /// Wakes the thread and joins it, waiting at most timeout_ms for its current tick to end.
  /// Returns false if it did not end in time (it is then left running). Only in the process that
  /// started it (elsewhere: true, nothing to stop); idempotent.
  bool Stop(unsigned timeout_ms);

 private:
  static void* Main(void* self);

  pthread_t thread_{};
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv_{};
  unsigned interval_ms_ = 200;
  void (*tick_)() = nullptr;
  bool stop_ = false;
  bool running_ = false;
  pid_t owner_ = 0;
};

}  // namespace trainprof::inject::cupti
