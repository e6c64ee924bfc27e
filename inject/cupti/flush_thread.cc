#include "cupti/flush_thread.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

namespace trainprof::inject::cupti {

bool FlushThread::Start(unsigned interval_ms, void (*tick)()) {
  if (running_) return true;
  interval_ms_ = interval_ms;
  tick_ = tick;
  stop_ = false;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&cv_, &ca);
  pthread_condattr_destroy(&ca);
  // The new thread inherits this mask: no signal of the program is ever delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&thread_, nullptr, Main, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) return false;
  running_ = true;
  owner_ = getpid();
  return true;
}

bool FlushThread::Stop(unsigned timeout_ms) {
  if (!running_ || owner_ != getpid()) return true;
  pthread_mutex_lock(&mu_);
  stop_ = true;
  pthread_cond_signal(&cv_);
  pthread_mutex_unlock(&mu_);
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);  // pthread_timedjoin_np measures CLOCK_REALTIME
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += static_cast<long>(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  if (pthread_timedjoin_np(thread_, nullptr, &deadline) != 0) return false;
  running_ = false;
  return true;
}

void* FlushThread::Main(void* arg) {
  auto* self = static_cast<FlushThread*>(arg);
  pthread_setname_np(pthread_self(), "trainprof-gpu");
  pthread_mutex_lock(&self->mu_);
  while (!self->stop_) {
    timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += self->interval_ms_ / 1000;
    deadline.tv_nsec += static_cast<long>(self->interval_ms_ % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1000000000L;
    }
    while (!self->stop_ && pthread_cond_timedwait(&self->cv_, &self->mu_, &deadline) == 0) {
    }
    if (self->stop_) break;
    pthread_mutex_unlock(&self->mu_);
    self->tick_();
    pthread_mutex_lock(&self->mu_);
  }
  pthread_mutex_unlock(&self->mu_);
  return nullptr;
}

}  // namespace trainprof::inject::cupti
