// The GPU sentences of the Bottleneck section (docs/analysis.md, "GPU idle time"): a pure
// function of the numbers in GpuIdle.
#include <cstdio>

#include "collector/analysis/gpu_idle.h"
#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

std::string D(double ns) { return FormatDuration(ns); }
std::string P(double percent) { return FormatPercent(percent) + "%"; }
std::string G(double v) {  // "1", "2.5", "0.333"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

void DescribeGpuIdle(const GpuIdle& g, std::vector<std::string>* out) {
  if (!g.recorded) {
    out->push_back("GPU activity: not recorded for this process (" + g.why_not + ").");
    return;
  }
  const double steps = g.steps > 0 ? static_cast<double>(g.steps) : 1.0;
  const double step = static_cast<double>(g.step_ns) / steps;
  if (g.gpu_bound) {
    out->push_back("GPU-bound: the GPU is busy " + P(g.busy_percent) + " of the step (mean " +
                   D(static_cast<double>(g.busy_ns) / steps) + " of " + D(step) + "; GPU-bound when idle below " +
                   FormatPercent(kGpuIdlePercent) + "%): the time goes to GPU work (see GPU kernels).");
    return;
  }
  std::string s = "GPU idle " + P(g.idle_percent) + " of the step (mean " + D(static_cast<double>(g.idle_ns) / steps) +
                  " of " + D(step) + "; busy " + P(g.busy_percent) + "); " + P(g.idle_share(g.cause)) +
                  " of the idle time the host was ";
  switch (g.cause) {
    case IdleCause::kDataWait:
      s += "waiting for data: the input pipeline keeps the GPU waiting.";
      break;
    case IdleCause::kSync: {
      const std::string call = (g.sync_after_dtoh ? ".item() / " : "") + g.sync_call;
      s += "in " + call + " (called " + G(g.sync_calls_per_step) + "x per step";
      if (g.sync_after_dtoh) {
        s += ", after a device-to-host copy of " + FormatBytes(static_cast<double>(g.sync_copy_bytes)) +
             " as .item(), .cpu() or .tolist() make";
      }
      s += "): the host blocks until the GPU is done and nothing is queued for the GPU meanwhile; synchronise less "
           "often (e.g. keep the loss on the GPU and read it every N steps).";
      break;
    }
    case IdleCause::kLaunch: {
      const std::string about = g.medians_exact ? "" : "~";  // estimated past 1024 values
      const std::string numbers = G(g.kernels_per_step) + (g.kernels_per_step == 1 ? " kernel" : " kernels") +
                                  " per step, median kernel " + about + D(g.kernel_median_ns) +
                                  ", median launch call " + about + D(g.launch_median_ns);
      if (g.launch_bound) {
        s += "launching kernels: launch-bound (" + numbers + "; launch-bound when launches cover " +
             FormatPercent(kLaunchBoundIdlePercent) + "% or more of the idle time and the median kernel is under " +
             D(static_cast<double>(kShortKernelNs)) +
             " or shorter than a launch call): use fewer, larger kernels (torch.compile, fused optimizers), CUDA "
             "graphs, or a larger batch.";
      } else {
        s += "launching kernels (" + numbers + "): the host issues GPU work more slowly than the GPU runs it.";
      }
      break;
    }
    default:
      s += "neither waiting for data nor in a synchronising or launch call (Python, CPU work or logging between GPU "
           "work).";
      break;
  }
  out->push_back(s);
  out->push_back("GPU idle time by what the host did: data wait " + P(g.idle_share(IdleCause::kDataWait)) +
                 ", synchronising calls " + P(g.idle_share(IdleCause::kSync)) + ", kernel launches " +
                 P(g.idle_share(IdleCause::kLaunch)) + ", other " + P(g.idle_share(IdleCause::kOther)) + ".");
}

}  // namespace trainprof::collector
