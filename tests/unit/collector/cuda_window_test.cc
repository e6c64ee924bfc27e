// Time windows over CUDA records (model/cuda_window.h) and the analyses made window by window:
// cutting windows by record starts, slicing an image's records, and the device rows (busy time,
// active window, launch latency) the same whatever the windows, against the rows one window gives.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "collector/model/cuda_calls.h"
#include "collector/base/duration_summary.h"
#include "collector/model/cuda_window.h"
#include "collector/analysis/collectives.h"
#include "collector/analysis/gpu_idle.h"
#include "collector/stats/gpu_devices.h"
#include "collector/stats/gpu_idle_kinds.h"
#include "collector/stats/gpu_overlap_sweep.h"
#include "collector/stats/kernel_launches.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

TEST(CutWindows, OneWindowUnderTheBudget) {
  const std::vector<TimeWindow> w = CutWindows({5, 1, 3}, 3);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].begin_ns, 0u);
  EXPECT_EQ(w[0].end_ns, UINT64_MAX);
  EXPECT_EQ(CutWindows({5, 1, 3}, 0).size(), 1u);
}

TEST(CutWindows, CoverAllTimeWithAtMostTheBudgetEach) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> starts;
  for (int i = 0; i < 1000; ++i) starts.push_back(rng() % 500);  // many equal starts
  for (size_t budget : {1, 2, 3, 10, 99, 999}) {
    const std::vector<TimeWindow> w = CutWindows(starts, budget);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(w.front().begin_ns, 0u);
    EXPECT_EQ(w.back().end_ns, UINT64_MAX);
    for (size_t k = 1; k < w.size(); ++k) EXPECT_EQ(w[k].begin_ns, w[k - 1].end_ns);
    size_t total = 0;
    for (const TimeWindow& win : w) {
      size_t n = 0;
      for (uint64_t s : starts) n += win.Owns(s) ? 1 : 0;
      total += n;
      // More than the budget only where every start in the window is the same time.
      if (n > budget) {
        for (uint64_t s : starts) {
          if (win.Owns(s)) EXPECT_EQ(s, win.begin_ns) << "budget " << budget;
        }
      }
    }
    EXPECT_EQ(total, starts.size());
    if (budget < 500) EXPECT_GT(w.size(), 1u) << "budget " << budget;
  }
}

TEST(CutWindows, ARunOfEqualStartsLongerThanTheBudgetGetsAWindowOfItsOwn) {
  const std::vector<TimeWindow> w = CutWindows({1, 2, 2, 2, 2, 3, 4}, 2);
  // [0,2) holds 1; [2,3) the four 2s; [3, max) holds 3 and 4.
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].end_ns, 2u);
  EXPECT_EQ(w[1].end_ns, 3u);
  EXPECT_EQ(w[2].begin_ns, 3u);
}

TEST(CutWindows, CountedStartsCutAsTheStartsTheyCount) {
  EXPECT_EQ(CutWindows(std::vector<StartCount>{{5, 2}, {9, 1}}, 3).size(), 1u);
  // A time counting more than the budget gets a window of its own.
  const std::vector<TimeWindow> own = CutWindows(std::vector<StartCount>{{1, 1}, {2, 10}, {3, 1}}, 2);
  ASSERT_EQ(own.size(), 3u);
  EXPECT_EQ(own[1].begin_ns, 2u);
  EXPECT_EQ(own[1].end_ns, 3u);
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<StartCount> counted;
    std::vector<uint64_t> each;
    for (int i = 0; i < 40; ++i) {
      const StartCount c{rng() % 100, rng() % 7};
      counted.push_back(c);
      for (uint64_t k = 0; k < c.count; ++k) each.push_back(c.time_ns);
    }
    for (size_t budget : {1, 4, 25, 1000}) {
      const std::vector<TimeWindow> a = CutWindows(counted, budget), b = CutWindows(each, budget);
      ASSERT_EQ(a.size(), b.size()) << "round " << round << ", budget " << budget;
      for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(std::tie(a[k].begin_ns, a[k].end_ns), std::tie(b[k].begin_ns, b[k].end_ns)) << "window " << k;
      }
    }
  }
}

TEST(ChunkReads, CountTheWindowsEachChunkSpanMeets) {
  const std::vector<TimeWindow> w = {{0, 50}, {50, 90}, {90, UINT64_MAX}};
  EXPECT_EQ(ChunkReads({{10, 5, 60}}, w), 2u);
  EXPECT_EQ(ChunkReads({{10, 5, 20}}, w), 1u);
  EXPECT_EQ(ChunkReads({{10, 5, UINT64_MAX}}, w), 3u);
  EXPECT_EQ(ChunkReads({{10, 1}}, w), 0u);  // a record's start: no chunk
}

TEST(CudaWindows, GrowWhereChunksWouldBeReadForManyWindows) {
  std::vector<Process> processes(1);
  processes[0].images.resize(1);
  // 100 chunks of 10 records each: narrow spans, or each reaching to the end of the run (a long
  // kernel in every chunk).
  auto chunks = [](uint64_t reach) {
    return [reach](const TraceImage&, std::vector<StartCount>* out) {
      for (uint64_t i = 0; i < 100; ++i) out->push_back({1000 + 10 * i, 10, reach == 0 ? 1005 + 10 * i : reach});
      return true;
    };
  };
  const CudaWindows narrow(processes, 10, {}, chunks(0));
  EXPECT_EQ(narrow.size(), 100u);
  const CudaWindows wide(processes, 10, {}, chunks(1'000'000));
  EXPECT_GT(wide.size(), 1u);
  EXPECT_LT(wide.size(), 30u);
  std::vector<StartCount> starts;
  chunks(1'000'000)(processes[0].images[0], &starts);
  std::vector<TimeWindow> cut;
  for (size_t k = 0; k < wide.size(); ++k) cut.push_back(wide.window(k));
  EXPECT_LE(ChunkReads(starts, cut), CudaWindows::kMaxChunkReads * 100 + cut.size());
}

TEST(SliceWindow, RecordsTheWindowOwnsOrOverlaps) {
  CudaData all;
  all.kernels.push_back({{.start_ns = 10, .end_ns = 30}});  // overlaps [20, 40)
  all.kernels.push_back({{.start_ns = 20, .end_ns = 20}});  // empty, owned
  all.kernels.push_back({{.start_ns = 40, .end_ns = 50}});  // after
  all.kernels.push_back({{.start_ns = 0, .end_ns = 20}});   // ends where the window begins
  all.memcpys.push_back({{.start_ns = 5, .end_ns = 100}});  // across the window
  CudaCall open{.begin_ns = 15, .end_ns = 15};            // never returned: until the process end
  CudaCall lost = open;
  lost.exit_lost = true;  // no end known: only its enter
  all.calls = {open, lost};
  const CudaData s = SliceWindow(all, {20, 40}, /*process_end_ns=*/90);
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].start_ns, 10u);
  EXPECT_EQ(s.kernels[1].start_ns, 20u);
  EXPECT_EQ(s.memcpys.size(), 1u);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_FALSE(s.calls[0].exit_lost);
  const TimeWindow w{20, 40};
  EXPECT_EQ(w.Clip(10, 30).begin, 20u);
  EXPECT_EQ(w.Clip(10, 30).end, 30u);
  EXPECT_EQ(w.Clip(5, 100).end, 40u);
}

// Processes with random calls and GPU records on two devices of two hosts: kernels queued behind
// their launch (and a few before it: clock trouble), long ones across many windows, concurrent
// ones, empty ones, copies and memsets, calls without GPU work; lifetimes that do not cover
// every record.
std::vector<Process> RandomProcesses(uint64_t seed, StringPool* strings, uint64_t calls_per_image = 400) {
  std::mt19937_64 rng(seed);
  const StringId launch = strings->Intern("cudaLaunchKernel_v7000"), copy = strings->Intern("cudaMemcpyAsync_v3020"),
                 set = strings->Intern("cudaMemsetAsync_v3020"), sync = strings->Intern("cudaStreamSynchronize_v3020"),
                 device_sync = strings->Intern("cudaDeviceSynchronize_v3020"),
                 blocking_copy = strings->Intern("cudaMemcpy_v3020");
  const StringId kernels[] = {strings->Intern("_Z4gemmPfi"), strings->Intern("_Z4fillPf"), 0,
                              strings->Intern("ncclKernel_AllReduce_RING_LL_Sum_float")};
  auto uniform = [&](uint64_t lo, uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  std::vector<Process> out;
  const char* hosts[] = {"a", "a", "b"};
  for (int p = 0; p < 3; ++p) {
    Process proc;
    proc.host = hosts[p];
    proc.pid = 100 + p;
    proc.start_ns = uniform(0, 2'000);
    proc.end_ns = proc.start_ns + uniform(50'000, 120'000);
    for (int i = 0; i < 2; ++i) {
      TraceImage img;
      CudaData& c = img.cuda;
      c.devices.push_back({.id = static_cast<uint32_t>(p % 2)});
      uint64_t t = proc.start_ns + uniform(0, 5'000);
      uint64_t queue = t;  // when the device is free again on stream 0
      for (uint64_t corr = 1 + 100'000 * i; corr < 100'000 * i + calls_per_image; ++corr) {
        t += uniform(10, 400);
        if (rng() % 15 == 0) t += uniform(2'000, 10'000);  // host work between GPU work: the GPU idles
        CudaCall call{.begin_ns = t, .end_ns = t + uniform(1, 30), .correlation = corr, .returned = true};
        if (rng() % 50 == 0) call.returned = false;
        if (rng() % 80 == 0) call.exit_lost = !call.returned;
        c.calls.push_back(call);
        const uint32_t device = static_cast<uint32_t>((p + (rng() % 7 == 0 ? 1 : 0)) % 2);
        const uint32_t stream = static_cast<uint32_t>(rng() % 3);
        switch (rng() % 8) {
          case 0:  // no GPU work: a synchronisation, the host waiting
            c.calls.back().name = device_sync;
            if (c.calls.back().returned) c.calls.back().end_ns += uniform(0, 3'000);
            break;
          case 1:
            c.calls.back().name = rng() % 3 == 0 ? blocking_copy : copy;
            c.memcpys.push_back(test::At({.start_ns = t + uniform(0, 50), .end_ns = 0, .correlation = corr},
                                         GpuMemcpy{.bytes = uniform(1, 4) << 20, .device = device, .stream = stream,
                                                   .kind = rng() % 2 ? format::MemcpyKind::kHtoD
                                                                     : format::MemcpyKind::kDtoH}));
            c.memcpys.back().end_ns = c.memcpys.back().start_ns + uniform(0, 3'000);
            if (c.calls.back().name == copy && c.memcpys.back().kind == format::MemcpyKind::kDtoH && rng() % 2 == 0) {
              // .item(): the copy, then a wait for it on the same thread, until the GPU is done.
              const uint64_t wait = c.calls.back().end_ns + uniform(1, 20);
              t = std::max(c.memcpys.back().end_ns, queue) + uniform(0, 2'000);
              c.calls.push_back({.begin_ns = wait, .end_ns = t, .correlation = corr + 500'000, .name = sync, .returned = true});
            }
            break;
          case 2:
            c.calls.back().name = set;
            c.memsets.push_back(test::At({.start_ns = t + uniform(0, 50), .end_ns = 0, .correlation = corr},
                                         GpuMemset{.device = device, .stream = stream}));
            c.memsets.back().end_ns = c.memsets.back().start_ns + uniform(0, 40);
            break;
          default: {
            c.calls.back().name = launch;
            const uint64_t start = rng() % 40 == 0 ? t - uniform(1, 5) : std::max(queue, t + uniform(2, 20));
            const uint64_t length = rng() % 30 == 0 ? uniform(5'000, 40'000) : uniform(0, 600);
            c.kernels.push_back(test::At({.start_ns = start, .end_ns = start + length, .correlation = corr},
                                         GpuKernel{.name = kernels[rng() % 4], .device = device, .stream = stream}));
            if (c.kernels.back().stream == 0) queue = start + length;
          }
        }
      }
      // A kernel after the process ended, one with no call.
      c.kernels.push_back({{.start_ns = proc.end_ns + 10, .end_ns = proc.end_ns + 500, .correlation = 999'999}});
      // Correlation 0 (no id given), a call and a kernel with it: the kernel has no call (the GPU
      // idle kinds) or the first call of id 0 (the launch latency), windowed as whole.
      c.calls.insert(c.calls.begin(), CudaCall{.begin_ns = proc.start_ns, .end_ns = proc.start_ns + 3, .correlation = 0,
                                               .name = launch, .returned = true});
      c.kernels.push_back(test::At({.start_ns = proc.end_ns + 600, .end_ns = proc.end_ns + 700, .correlation = 0},
                                   GpuKernel{.device = static_cast<uint32_t>(p % 2), .stream = 1}));
      proc.images.push_back(std::move(img));
    }
    out.push_back(std::move(proc));
  }
  return out;
}

// The rows with the records cut into the windows of `budget` record starts each.
// The windows of `budget` record starts each over the processes, and each window's records of
// every image: records[p][i] (slices of the whole records, as a windowed read would give).
struct Windows {
  std::vector<TimeWindow> cut;
  std::vector<std::vector<std::vector<CudaData>>> slices;  // [window][process][image]
  std::vector<std::vector<const CudaData*>> Of(size_t k) const {
    std::vector<std::vector<const CudaData*>> out;
    for (const auto& images : slices[k]) {
      out.emplace_back();
      for (const CudaData& c : images) out.back().push_back(&c);
    }
    return out;
  }
};

Windows CutInto(const std::vector<Process>& procs, size_t budget) {
  Windows w;
  std::vector<uint64_t> starts;
  for (const Process& p : procs) {
    for (const TraceImage& img : p.images) AppendStarts(img.cuda, &starts);
  }
  w.cut = CutWindows(std::move(starts), budget);
  for (const TimeWindow& win : w.cut) {
    w.slices.emplace_back();
    for (const Process& p : procs) {
      w.slices.back().emplace_back();
      for (const TraceImage& img : p.images) w.slices.back().back().push_back(SliceWindow(img.cuda, win, p.end_ns));
    }
  }
  return w;
}

std::vector<DeviceRow> Windowed(const std::vector<Process>& procs, const StringPool& strings, bool merged,
                                const Windows& windows) {
  std::vector<const Process*> ptrs;
  std::vector<std::set<uint32_t>> devices;
  std::vector<std::vector<IdMap<uint64_t>>> enter(procs.size());
  std::vector<std::vector<const IdMap<uint64_t>*>> enter_of(procs.size());
  for (size_t p = 0; p < procs.size(); ++p) {
    ptrs.push_back(&procs[p]);
    devices.push_back(DevicesUsed(procs[p]));
    for (const TraceImage& img : procs[p].images) enter[p].push_back(EnterByCorrelation(img.cuda));
    for (const IdMap<uint64_t>& e : enter[p]) enter_of[p].push_back(&e);
  }
  DeviceSweep sweep(ptrs, strings, merged, devices);
  for (size_t k = 0; k < windows.cut.size(); ++k) sweep.Add(windows.cut[k], windows.Of(k), enter_of);
  return std::move(sweep).Rows();
}

void ExpectSame(const DeviceRow& a, const DeviceRow& b, const std::string& where) {
  EXPECT_EQ(a.pid, b.pid) << where;
  EXPECT_EQ(a.host, b.host) << where;
  EXPECT_EQ(a.device, b.device) << where;
  EXPECT_EQ(a.processes, b.processes) << where;
  EXPECT_EQ(a.kernels, b.kernels) << where;
  EXPECT_EQ(a.kernel_ns, b.kernel_ns) << where;
  EXPECT_EQ(a.memcpys, b.memcpys) << where;
  EXPECT_EQ(a.memsets, b.memsets) << where;
  EXPECT_EQ(a.memory_ns, b.memory_ns) << where;
  EXPECT_EQ(a.busy_ns, b.busy_ns) << where;
  EXPECT_EQ(a.lifetime_ns, b.lifetime_ns) << where;
  EXPECT_EQ(a.busy_percent, b.busy_percent) << where;
  EXPECT_EQ(a.active_begin_ns, b.active_begin_ns) << where;
  EXPECT_EQ(a.active_end_ns, b.active_end_ns) << where;
  EXPECT_EQ(a.active_busy_percent, b.active_busy_percent) << where;
  EXPECT_EQ(a.latency_count, b.latency_count) << where;
  EXPECT_EQ(a.latency_mean_ns, b.latency_mean_ns) << where;
  EXPECT_EQ(a.latency_median_ns, b.latency_median_ns) << where;
  EXPECT_EQ(a.latency_p95_ns, b.latency_p95_ns) << where;
  EXPECT_EQ(a.latency_exact, b.latency_exact) << where;
}

TEST(DeviceSweep, AnyWindowsGiveTheRowsOfOneWindow) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    StringPool strings;
    // Seed 4: more than 1024 kernels a device, the latency median and p95 estimated.
    const std::vector<Process> procs = RandomProcesses(seed, &strings, seed == 4 ? 3'000 : 400);
    std::vector<const Process*> ptrs;
    for (const Process& p : procs) ptrs.push_back(&p);
    const std::vector<DeviceRow> merged = MergedDevices(ptrs, strings);
    std::vector<DeviceRow> per_process;
    for (const Process& p : procs) {
      for (DeviceRow& r : ProcessDevices(p, strings)) per_process.push_back(std::move(r));
    }
    ASSERT_EQ(merged.size(), 4u);  // (a, 0), (a, 1), (b, 0), (b, 1)
    ASSERT_GE(per_process.size(), 5u);
    EXPECT_GT(merged[0].busy_ns, 0u);
    EXPECT_LT(merged[0].busy_ns, merged[0].kernel_ns + merged[0].memory_ns);  // concurrent work counts once
    EXPECT_GT(merged[0].latency_count, 0u);
    EXPECT_EQ(merged[0].latency_exact, merged[0].latency_count <= DurationSummary::kExactSamples);
    if (seed == 4) EXPECT_FALSE(merged[0].latency_exact);
    for (size_t budget : {1, 7, 100, 1000}) {
      const Windows windows = CutInto(procs, budget);
      const std::string where = "seed " + std::to_string(seed) + ", " + std::to_string(budget) + " starts a window";
      const std::vector<DeviceRow> m = Windowed(procs, strings, true, windows);
      EXPECT_GT(windows.cut.size(), 1u) << where;
      ASSERT_EQ(m.size(), merged.size()) << where;
      for (size_t i = 0; i < m.size(); ++i) ExpectSame(m[i], merged[i], where + ", merged row " + std::to_string(i));
      const std::vector<DeviceRow> pp = Windowed(procs, strings, false, windows);
      ASSERT_EQ(pp.size(), per_process.size()) << where;
      for (size_t i = 0; i < pp.size(); ++i) ExpectSame(pp[i], per_process[i], where + ", row " + std::to_string(i));
    }
  }
}

// Each process's device uses (its summary's part), made whole or window by window, give its own
// rows and, merged, the rows of one merged sweep: devices shared by the processes of a host and
// devices one process used (renumbered so), exact while the activity is within the bound.
TEST(DeviceSweep, RowsMadeFromEachProcesssUsesAreTheSweepsRows) {
  for (bool shared : {true, false}) {
    StringPool strings;
    std::vector<Process> procs = RandomProcesses(2, &strings);
    if (!shared) {  // one process per GPU: process p's devices d renumbered 2p + d
      for (size_t p = 0; p < procs.size(); ++p) {
        auto renumber = [&](uint32_t d) { return static_cast<uint32_t>(2 * p) + d; };
        for (TraceImage& img : procs[p].images) {
          for (GpuDevice& d : img.cuda.devices) d.id = renumber(d.id);
          for (GpuKernel& k : img.cuda.kernels) k.device = renumber(k.device);
          for (GpuMemcpy& m : img.cuda.memcpys) m.device = renumber(m.device);
          for (GpuMemset& m : img.cuda.memsets) m.device = renumber(m.device);
        }
      }
    }
    std::vector<const Process*> ptrs;
    for (const Process& p : procs) ptrs.push_back(&p);
    const std::vector<DeviceRow> merged = MergedDevices(ptrs, strings);
    const Windows windows = CutInto(procs, 7);
    for (bool windowed : {false, true}) {
      const std::string where = std::string(shared ? "shared" : "one process a device") + (windowed ? ", windows" : "");
      std::vector<std::vector<DeviceUse>> uses;
      // Whole: the activity kept on shared devices only (a report's choice), the others' span.
      const std::vector<std::set<uint32_t>> kept = SharedDevices(ptrs);
      EXPECT_EQ(kept[0].empty(), !shared) << where;
      for (size_t p = 0; p < procs.size(); ++p) {
        if (!windowed) {
          uses.push_back(DeviceUsesOf(procs[p], strings, &kept[p]));
          continue;
        }
        std::vector<IdMap<uint64_t>> enter;
        std::vector<const IdMap<uint64_t>*> enter_of;
        for (const TraceImage& img : procs[p].images) enter.push_back(EnterByCorrelation(img.cuda));
        for (const IdMap<uint64_t>& e : enter) enter_of.push_back(&e);
        DeviceSweep sweep({&procs[p]}, strings, /*merged=*/false, {DevicesUsed(procs[p])});
        for (size_t k = 0; k < windows.cut.size(); ++k) sweep.Add(windows.cut[k], {windows.Of(k)[p]}, {enter_of});
        uses.push_back(std::move(sweep).Uses());
      }
      std::vector<ProcessDeviceUses> of;
      for (size_t p = 0; p < procs.size(); ++p) {
        of.push_back({procs[p].host, procs[p].pid, {procs[p].start_ns, procs[p].end_ns}, &uses[p]});
        const std::vector<DeviceRow> own = ProcessDeviceRows(of.back());
        const std::vector<DeviceRow> swept = ProcessDevices(procs[p], strings);
        ASSERT_EQ(own.size(), swept.size()) << where;
        for (size_t i = 0; i < own.size(); ++i) ExpectSame(own[i], swept[i], where + ", own row " + std::to_string(i));
        for (const DeviceUse& u : uses[p]) {
          EXPECT_EQ(Length(u.activity), u.active_ns + u.filled_ns) << where;
          if (windowed || kept[p].count(u.device) > 0) {
            EXPECT_EQ(u.filled_ns, 0u) << where;  // kept whole: within the bound
          } else {
            EXPECT_EQ(u.activity.size(), 1u) << where;  // its span alone
          }
        }
      }
      const std::vector<DeviceRow> from_uses = MergedDeviceRows(of);
      ASSERT_EQ(from_uses.size(), merged.size()) << where;
      ASSERT_GE(merged.size(), 4u);
      for (size_t i = 0; i < merged.size(); ++i) {
        ExpectSame(from_uses[i], merged[i], where + ", merged row " + std::to_string(i));
        EXPECT_EQ(from_uses[i].busy_error_ns, 0u) << where;
        EXPECT_EQ(from_uses[i].processes, merged[i].processes) << where;
      }
      if (shared) EXPECT_GT(merged[0].processes, 1u);
    }
  }
}

// Bounded to a few intervals, a process's activity fills its shortest gaps: a shared device's
// merged busy time is then over by at most what was filled, and said (busy_error_ns).
TEST(DeviceSweep, BoundedActivityOverstatesASharedDevicesBusyTimeByAtMostWhatItFilled) {
  StringPool strings;
  const std::vector<Process> procs = RandomProcesses(3, &strings);
  std::vector<const Process*> ptrs;
  for (const Process& p : procs) ptrs.push_back(&p);
  const std::vector<DeviceRow> exact = MergedDevices(ptrs, strings);
  std::vector<std::vector<DeviceUse>> uses;
  std::vector<ProcessDeviceUses> of;
  for (const Process& p : procs) {
    uses.push_back(DeviceUsesOf(p, strings));
    for (DeviceUse& u : uses.back()) {
      ASSERT_GT(u.activity.size(), 3u);
      BoundActivity(&u.activity, 3, &u.filled_ns);
      EXPECT_EQ(u.activity.size(), 3u);
      EXPECT_EQ(Length(u.activity), u.active_ns + u.filled_ns);
    }
  }
  for (size_t p = 0; p < procs.size(); ++p) {
    of.push_back({procs[p].host, procs[p].pid, {procs[p].start_ns, procs[p].end_ns}, &uses[p]});
  }
  const std::vector<DeviceRow> bounded = MergedDeviceRows(of);
  ASSERT_EQ(bounded.size(), exact.size());
  bool some_shared = false;
  for (size_t i = 0; i < exact.size(); ++i) {
    if (exact[i].processes < 2) continue;
    some_shared = true;
    EXPECT_GT(bounded[i].busy_error_ns, 0u) << i;
    EXPECT_GE(bounded[i].busy_ns, exact[i].busy_ns) << i;
    EXPECT_LE(bounded[i].busy_ns, exact[i].busy_ns + bounded[i].busy_error_ns) << i;
    EXPECT_EQ(bounded[i].kernels, exact[i].kernels) << i;
    EXPECT_EQ(bounded[i].active_begin_ns, exact[i].active_begin_ns) << i;
    EXPECT_EQ(bounded[i].active_end_ns, exact[i].active_end_ns) << i;
  }
  EXPECT_TRUE(some_shared);
}

TEST(BoundActivity, JoinsWhatTouchesThenFillsTheShortestGapsEarliestFirst) {
  IntervalSet a = {{0, 10}, {12, 20}, {20, 25}, {30, 40}, {41, 50}, {60, 70}};
  uint64_t filled = 0;
  BoundActivity(&a, 10, &filled);  // within the bound: only [12, 20) and [20, 25) joined
  EXPECT_EQ(a, (IntervalSet{{0, 10}, {12, 25}, {30, 40}, {41, 50}, {60, 70}}));
  EXPECT_EQ(filled, 0u);
  BoundActivity(&a, 3, &filled);  // gaps 2, 5, 1, 10: the 1 and the 2 filled
  EXPECT_EQ(a, (IntervalSet{{0, 25}, {30, 50}, {60, 70}}));
  EXPECT_EQ(filled, 3u);
  IntervalSet ties = {{0, 1}, {6, 7}, {12, 13}, {18, 19}};  // three gaps of 5: two filled, the earliest
  filled = 0;
  BoundActivity(&ties, 2, &filled);
  EXPECT_EQ(ties, (IntervalSet{{0, 13}, {18, 19}}));
  EXPECT_EQ(filled, 10u);
  BoundActivity(&ties, 1, &filled);
  EXPECT_EQ(ties, (IntervalSet{{0, 19}}));
  EXPECT_EQ(filled, 15u);
}

TEST(IdleKindsSweep, AnyWindowsGiveTheRowsOfOneWindow) {
  for (uint64_t seed : {4, 5}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(seed, &strings);
    std::vector<std::vector<StreamIdleKinds>> whole;
    for (const Process& p : procs) {
      std::vector<const CudaData*> images;
      for (const TraceImage& img : p.images) images.push_back(&img.cuda);
      whole.push_back(IdleKindsByStream(images, /*kernel_wait_ns=*/300));
    }
    uint64_t host_wait = 0, kernel_wait = 0, other = 0;
    for (const StreamIdleKinds& r : whole[0]) host_wait += r.host_wait_ns, kernel_wait += r.kernel_wait_ns, other += r.other_ns;
    EXPECT_GT(host_wait, 0u);  // every kind occurs
    EXPECT_GT(kernel_wait, 0u);
    EXPECT_GT(other, 0u);
    for (size_t budget : {1, 7, 100, 1000}) {
      const Windows windows = CutInto(procs, budget);
      for (size_t p = 0; p < procs.size(); ++p) {
        std::vector<IdMap<uint64_t>> begin;
        std::vector<const IdMap<uint64_t>*> begin_of;
        // Correlation 0 kept in the look-up: the sweep itself gives an op of id 0 no call.
        for (const TraceImage& img : procs[p].images) begin.push_back(EnterByCorrelation(img.cuda));
        for (const IdMap<uint64_t>& b : begin) begin_of.push_back(&b);
        IdleKindsSweep sweep(procs[p].images.size(), 300);
        for (size_t k = 0; k < windows.cut.size(); ++k) sweep.Add(windows.cut[k], windows.Of(k)[p], begin_of);
        const std::vector<StreamIdleKinds> rows = std::move(sweep).Rows();
        const std::string where = "seed " + std::to_string(seed) + ", budget " + std::to_string(budget) + ", process " +
                                  std::to_string(p);
        ASSERT_EQ(rows.size(), whole[p].size()) << where;
        for (size_t i = 0; i < rows.size(); ++i) {
          const StreamIdleKinds &a = rows[i], &b = whole[p][i];
          EXPECT_EQ(std::tie(a.device, a.stream, a.ops, a.idle_ns, a.host_wait_ns, a.kernel_wait_ns, a.other_ns),
                    std::tie(b.device, b.stream, b.ops, b.idle_ns, b.host_wait_ns, b.kernel_wait_ns, b.other_ns))
              << where << ", row " << i;
          EXPECT_EQ(a.host_wait_percent, b.host_wait_percent) << where;
          EXPECT_EQ(a.other_percent, b.other_percent) << where;
        }
      }
    }
  }
}

TEST(KernelLaunchSweep, AnyWindowsGiveTheRowsOfOneWindow) {
  for (uint64_t seed : {6, 7}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(seed, &strings);
    std::vector<const CudaData*> all;
    for (const Process& p : procs) {
      for (const TraceImage& img : p.images) all.push_back(&img.cuda);
    }
    const KernelLaunches whole = AnalyzeKernelLaunches(all, strings, false, 0);
    // gemm, fill, <unnamed>, nccl, memcpy HtoD and DtoH, memset
    ASSERT_EQ(whole.rows.size(), 7u);
    for (size_t budget : {1, 7, 100, 1000}) {
      const Windows windows = CutInto(procs, budget);
      std::vector<IdMap<LaunchCall>> launches;
      std::vector<const IdMap<LaunchCall>*> launch_of;
      for (const CudaData* c : all) launches.push_back(LaunchCallsOf(*c, strings));
      for (const IdMap<LaunchCall>& l : launches) launch_of.push_back(&l);
      KernelLaunchSweep sweep(strings);
      for (size_t k = 0; k < windows.cut.size(); ++k) {
        std::vector<const CudaData*> images;
        for (const auto& of_process : windows.Of(k)) images.insert(images.end(), of_process.begin(), of_process.end());
        sweep.Add(windows.cut[k], images, launch_of);
      }
      const KernelLaunches rows = std::move(sweep).Rows([] { return std::vector<const CudaDigest*>{}; }, false, 0);
      const std::string where = "seed " + std::to_string(seed) + ", budget " + std::to_string(budget);
      ASSERT_EQ(rows.rows.size(), whole.rows.size()) << where;
      for (size_t i = 0; i < rows.rows.size(); ++i) {
        const KernelLaunchRow &a = rows.rows[i], &b = whole.rows[i];
        EXPECT_EQ(std::tie(a.name, a.count, a.shorter_than_launch, a.long_launches, a.long_delays),
                  std::tie(b.name, b.count, b.shorter_than_launch, b.long_launches, b.long_delays))
            << where;
        EXPECT_EQ(std::tie(a.cpu_launch_mean_ns, a.cpu_launch_median_ns, a.launch_delay_mean_ns,
                           a.launch_delay_median_ns, a.launch_delay_p95_ns),
                  std::tie(b.cpu_launch_mean_ns, b.cpu_launch_median_ns, b.launch_delay_mean_ns,
                           b.launch_delay_median_ns, b.launch_delay_p95_ns))
            << where << ", " << a.name;
      }
    }
  }
}


// Each process's launches swept on their own (a summary's part, GpuOpsSummary) and merged by name
// give the rows of one sweep over every image, past the exact samples too (histograms added).
TEST(KernelLaunchSweep, PerProcessSamplesMergedGiveTheRowsOfOneSweep) {
  for (uint64_t calls : {400, 3'000}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(9, &strings, calls);
    ASSERT_GE(procs.size(), 2u);
    std::vector<const CudaData*> all;
    std::vector<std::vector<LaunchSamples>> per_process;
    for (const Process& p : procs) {
      KernelLaunchSweep own(strings);
      for (const TraceImage& img : p.images) {
        all.push_back(&img.cuda);
        const IdMap<LaunchCall> launches = LaunchCallsOf(img.cuda, strings);
        own.Add(TimeWindow{}, {&img.cuda}, {&launches});
      }
      per_process.push_back(std::move(own).Samples());
    }
    const KernelLaunches whole = AnalyzeKernelLaunches(all, strings, false, 0);
    std::vector<const std::vector<LaunchSamples>*> of;
    for (const std::vector<LaunchSamples>& s : per_process) of.push_back(&s);
    const KernelLaunches merged =
        KernelLaunchRows(of, [] { return std::vector<const CudaDigest*>{}; }, strings, false, 0);
    ASSERT_EQ(merged.rows.size(), whole.rows.size());
    bool estimated = false;
    for (size_t i = 0; i < merged.rows.size(); ++i) {
      const KernelLaunchRow &a = merged.rows[i], &b = whole.rows[i];
      EXPECT_EQ(std::tie(a.name, a.count, a.shorter_than_launch, a.long_launches, a.long_delays, a.exact),
                std::tie(b.name, b.count, b.shorter_than_launch, b.long_launches, b.long_delays, b.exact));
      EXPECT_EQ(std::tie(a.cpu_launch_median_ns, a.launch_delay_median_ns, a.launch_delay_p95_ns),
                std::tie(b.cpu_launch_median_ns, b.launch_delay_median_ns, b.launch_delay_p95_ns))
          << a.name;
      EXPECT_NEAR(a.cpu_launch_mean_ns, b.cpu_launch_mean_ns, 1e-9 * b.cpu_launch_mean_ns) << a.name;
      EXPECT_NEAR(a.launch_delay_mean_ns, b.launch_delay_mean_ns, 1e-9 * b.launch_delay_mean_ns + 1e-9) << a.name;
      estimated = estimated || !a.exact;
    }
    EXPECT_EQ(estimated, calls > 1'000) << calls;
  }
}
TEST(GpuOverlapSweep, AnyWindowsGiveWhatOneWindowGives) {
  for (uint64_t seed : {8, 9}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(seed, &strings);
    for (size_t p = 0; p < procs.size(); ++p) {
      const Process& proc = procs[p];
      // Steps of 10 µs with gaps of 3 µs over the process's life.
      std::vector<StepWindow> steps;
      for (uint64_t t = proc.start_ns, n = 0; t < proc.end_ns; t += 13'000, ++n) steps.push_back({n, {t, t + 10'000}});
      GpuOverlapSweep whole(steps);
      whole.Add(CategorizeActivity(proc, strings));
      ASSERT_FALSE(whole.empty());
      const KernelCategoryBreakdown c = whole.Categories();
      EXPECT_GT(c.computation_overlapping_communication_ns, 0u);  // every part occurs
      EXPECT_GT(c.communication_overlapping_memory_ns, 0u);
      EXPECT_GT(c.computation_ns, 0u);
      const std::vector<StepCommunication> per_step = whole.Steps();
      ASSERT_EQ(per_step.size(), steps.size());
      for (size_t budget : {1, 7, 100, 1000}) {
        const Windows windows = CutInto(procs, budget);
        std::vector<IdMap<uint64_t>> enter;
        std::vector<const IdMap<uint64_t>*> enter_of;
        for (const TraceImage& img : proc.images) enter.push_back(EnterByCorrelation(img.cuda));
        for (const IdMap<uint64_t>& e : enter) enter_of.push_back(&e);
        GpuOverlapSweep sweep(steps);
        for (size_t k = 0; k < windows.cut.size(); ++k) {
          sweep.Add(CategorizeActivity(proc, strings, windows.cut[k], windows.Of(k)[p], enter_of));
        }
        const std::string where = "seed " + std::to_string(seed) + ", budget " + std::to_string(budget) + ", process " +
                                  std::to_string(p);
        const TemporalBreakdown a = sweep.Temporal(), b = whole.Temporal();
        EXPECT_EQ(std::tie(a.active_span_ns, a.idle_ns, a.compute_ns, a.non_compute_ns, a.idle_percent),
                  std::tie(b.active_span_ns, b.idle_ns, b.compute_ns, b.non_compute_ns, b.idle_percent))
            << where;
        const KernelCategoryBreakdown x = sweep.Categories(), y = whole.Categories();
        EXPECT_EQ(std::tie(x.computation_ns, x.communication_ns, x.memory_ns, x.computation_overlapping_communication_ns,
                           x.communication_overlapping_memory_ns, x.computation_overlapping_memory_ns,
                           x.computation_overlapping_communication_overlapping_memory_ns, x.communication_total_ns,
                           x.communication_hidden_ns, x.communication_hidden_percent),
                  std::tie(y.computation_ns, y.communication_ns, y.memory_ns, y.computation_overlapping_communication_ns,
                           y.communication_overlapping_memory_ns, y.computation_overlapping_memory_ns,
                           y.computation_overlapping_communication_overlapping_memory_ns, y.communication_total_ns,
                           y.communication_hidden_ns, y.communication_hidden_percent))
            << where;
        const std::vector<StepCommunication> s = sweep.Steps();
        ASSERT_EQ(s.size(), per_step.size()) << where;
        for (size_t i = 0; i < s.size(); ++i) {
          EXPECT_EQ(std::tie(s[i].step, s[i].communication_ns, s[i].hidden_ns, s[i].hidden_percent),
                    std::tie(per_step[i].step, per_step[i].communication_ns, per_step[i].hidden_ns,
                             per_step[i].hidden_percent))
              << where << ", step " << i;
        }
      }
    }
  }
}

TEST(GpuIdleSweep, AnyWindowsGiveWhatOneWindowGives) {
  // Over all the processes every cause of idle time occurs, and a synchronising call is named.
  std::array<uint64_t, kIdleCauses> idle_by_cause{};
  size_t sync_calls = 0, dtoh_syncs = 0;
  for (uint64_t seed : {10, 11, 12}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(seed, &strings);
    for (size_t p = 0; p < procs.size(); ++p) {
      const Process& proc = procs[p];
      // Steps of 8 µs with gaps of 2 µs, a data wait at the start of every third one.
      std::vector<Interval> steps;
      std::vector<Interval> waits;
      for (uint64_t t = proc.start_ns, n = 0; t < proc.end_ns; t += 10'000, ++n) {
        steps.push_back({t, t + 8'000});
        if (n % 3 == 0) waits.push_back({t, t + 1'500});
      }
      const IntervalSet wait_set = Union(waits);
      const GpuIdle whole = AnalyzeGpuIdle(proc, steps, wait_set, strings);
      ASSERT_TRUE(whole.recorded);
      for (size_t c = 0; c < kIdleCauses; ++c) idle_by_cause[c] += whole.idle_by_cause[c];
      sync_calls += whole.sync_call.empty() ? 0 : 1;
      dtoh_syncs += whole.sync_after_dtoh ? 1 : 0;
      EXPECT_GT(whole.kernels, 0u);
      EXPECT_GT(whole.launch_calls, 0u);
      std::vector<Correlated> correlated;
      std::vector<const Correlated*> of;
      for (const TraceImage& img : proc.images) correlated.push_back(CorrelateGpuRecords(img.cuda));
      for (const Correlated& c : correlated) of.push_back(&c);
      for (size_t budget : {1, 7, 100, 1000}) {
        const Windows windows = CutInto(procs, budget);
        GpuIdleSweep sweep(proc, steps, wait_set, strings, of);
        for (size_t k = 0; k < windows.cut.size(); ++k) sweep.Add(windows.cut[k], windows.Of(k)[p]);
        const GpuIdle g = std::move(sweep).Result(true);
        const std::string where = "seed " + std::to_string(seed) + ", budget " + std::to_string(budget) + ", process " +
                                  std::to_string(p);
        EXPECT_EQ(std::tie(g.steps, g.step_ns, g.busy_ns, g.idle_ns, g.busy_percent, g.idle_percent, g.idle_by_cause,
                           g.cause, g.gpu_bound),
                  std::tie(whole.steps, whole.step_ns, whole.busy_ns, whole.idle_ns, whole.busy_percent,
                           whole.idle_percent, whole.idle_by_cause, whole.cause, whole.gpu_bound))
            << where;
        EXPECT_EQ(std::tie(g.sync_call, g.sync_call_idle_ns, g.sync_calls, g.sync_calls_per_step, g.sync_after_dtoh,
                           g.sync_copy_bytes),
                  std::tie(whole.sync_call, whole.sync_call_idle_ns, whole.sync_calls, whole.sync_calls_per_step,
                           whole.sync_after_dtoh, whole.sync_copy_bytes))
            << where;
        EXPECT_EQ(std::tie(g.kernels, g.kernels_per_step, g.kernel_median_ns, g.launch_calls, g.launch_median_ns,
                           g.launch_bound),
                  std::tie(whole.kernels, whole.kernels_per_step, whole.kernel_median_ns, whole.launch_calls,
                           whole.launch_median_ns, whole.launch_bound))
            << where;
      }
    }
  }
  for (size_t c = 0; c < kIdleCauses; ++c) EXPECT_GT(idle_by_cause[c], 0u) << "cause " << c;
  EXPECT_GT(sync_calls, 0u);
  EXPECT_GT(dtoh_syncs, 0u);
}

TEST(CollectivesSweep, AnyWindowsGiveWhatOneWindowGives) {
  for (uint64_t seed : {13, 14}) {
    StringPool strings;
    const std::vector<Process> procs = RandomProcesses(seed, &strings);
    for (size_t p = 0; p < procs.size(); ++p) {
      // Overlapping steps (two threads' steps), as the statistics may have.
      std::vector<Interval> steps;
      for (uint64_t t = procs[p].start_ns; t < procs[p].end_ns; t += 9'000) steps.push_back({t, t + 12'000});
      const CollectiveInfo whole = AnalyzeCollectives(procs[p], steps, strings);
      ASSERT_EQ(whole.source, "nccl_kernels");
      EXPECT_GT(whole.nccl_kernels, 0u);
      for (size_t budget : {1, 7, 100, 1000}) {
        const Windows windows = CutInto(procs, budget);
        CollectivesSweep sweep(steps, strings);
        for (size_t k = 0; k < windows.cut.size(); ++k) sweep.Add(windows.cut[k], windows.Of(k)[p]);
        const CollectiveInfo c = std::move(sweep).Result(DdpBackend(procs[p]));
        EXPECT_EQ(std::tie(c.source, c.nccl_kernels, c.gpu_ns_per_step, c.gpu_percent),
                  std::tie(whole.source, whole.nccl_kernels, whole.gpu_ns_per_step, whole.gpu_percent))
            << "seed " << seed << ", budget " << budget << ", process " << p;
      }
    }
  }
}

}  // namespace
}  // namespace trainprof::collector
