// Phases of a training loop that the Python shim (python/_trainprof/) records, as NVTX ranges
// in the domain kPhaseDomain with these categories. The collector's bottleneck analysis keys on
// (domain, category), never on range names, which follow PyTorch's own names and vary.
// The numbers are part of the trace format (docs/trace-format.md, "Training phases").
#pragma once

#include <cstdint>

namespace trainprof::format {

inline constexpr const char* kPhaseDomain = "trainprof";

enum class Phase : uint32_t {
  kNone = 0,
  kDataWait = 1,        ///< main process: one DataLoader iterator __next__ that returned a batch
                        ///< name: "enumerate(DataLoader)#<IterClass>.__next__" (torch.profiler's)
  kDataEnd = 2,         ///< mark right after a __next__ that raised StopIteration (epoch end);
                        ///< the kDataWait range just before it is that failed call, not a step
  kFetch = 3,           ///< one batch fetch (worker, or main with num_workers=0):
                        ///< "_MapDatasetFetcher.fetch" / "_IterableDatasetFetcher.fetch"
  kGetItem = 4,         ///< one dataset item: "<DatasetClass>.__getitem__" (or __getitems__)
  kCollate = 5,         ///< collate_fn on one batch: "<collate_fn name>"
  kWorkerInit = 6,      ///< worker start-up: worker_init_fn: "worker_init_fn:<name>"
  kForward = 7,         ///< a top-level nn.Module call from user code: "<ModuleClass>.forward"
  kBackward = 8,        ///< "Tensor.backward" / "torch.autograd.backward"
  kOptimizerStep = 9,   ///< "Optimizer.step#<Class>.step" (torch.profiler's name)
  kZeroGrad = 10,       ///< "Optimizer.zero_grad#<Class>.zero_grad"
  kCollective = 11,     ///< a torch.distributed collective called from Python: "all_reduce", ...
  kTrainingStep = 12,   ///< Lightning: "[Strategy]<Strategy>.training_step" (SimpleProfiler's name)
  kValidationStep = 13, ///< Lightning: "[Strategy]<Strategy>.validation_step" (test/predict too)
  kDataLoaderIter = 14, ///< main process: creating a DataLoader iterator (`iter(loader)`,
                        ///< `_BaseDataLoaderIter.__init__`), which starts its workers
  kCheckpoint = 15,     ///< `torch.save` / `torch.load` called from the program: "torch.save", ...
  kInitProcessGroup = 16, ///< `torch.distributed.init_process_group`
  kDataLoader = 17,     ///< mark naming a DataLoader: main process, at `DataLoader.__iter__`
                        ///< ("DataLoader#<id> dataset=<Class> batch_size=<n|none> num_workers=<n>
                        ///< persistent_workers=<0|1> pin_memory=<0|1>"); worker, at its start
                        ///< ("DataLoader#<id|?> dataset=<Class> num_workers=<n> worker_id=<k>")
  kDataLoaderBatch = 18, ///< mark inside a kDataWait range: the loader waited on (its description)
  kProfilerStep = 19,   ///< one training step as torch.profiler marks it: "ProfilerStep#<N>" (the span
                        ///< between two `prof.step()` calls); from imported Kineto traces, and written
                        ///< back by the Kineto export from trainprof's steps. The shim does not record it.
  kPhaseCount
};

}  // namespace trainprof::format
