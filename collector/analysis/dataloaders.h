// DataLoader identities: which DataLoader each data wait of a training process and each of its
// worker processes belongs to, from the marks the Python shim records (format/trainprof/phases.h:
// kDataLoader, kDataLoaderBatch; docs/trace-format.md, "DataLoader identity").
//
//   main     DataLoader#1 (iter) ─ wait[#1] wait[#1] ... DataLoader#2 (iter) ─ wait[#2] ...
//   worker   DataLoader#1 worker_id=0   (forked inside iter(loader #1): the id is inherited)
//   worker   DataLoader#? worker_id=0   (spawn: tied to the last iter() of a loader with the same
//                                        dataset class and num_workers before the worker started)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/analysis/process_facts.h"
#include "collector/analysis/training_steps.h"
#include "collector/base/intervals.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// The fields of a DataLoader mark's name: "DataLoader#<id|?>" then "key=value" words.
struct LoaderDescription {
  std::optional<int64_t> id;  ///< none for "DataLoader#?" (a spawned worker)
  std::string dataset;        ///< the dataset's class name
  std::optional<int64_t> batch_size;  ///< none for batch_size=None (or unknown)
  std::optional<int64_t> num_workers;
  std::optional<bool> persistent_workers;
  std::optional<bool> pin_memory;
  std::optional<int64_t> worker_id;  ///< workers' marks only
};

/// Parses a kDataLoader / kDataLoaderBatch mark name; none when it does not start with
/// "DataLoader#". Unknown words are ignored, malformed values leave the field empty.
std::optional<LoaderDescription> ParseLoaderName(std::string_view name);

/// One DataLoader of a training process.
struct LoaderIdentity {
  LoaderDescription description;  ///< from the main process's marks
  std::vector<Interval> waits;    ///< its kDataWait ranges (main process), by begin
  uint64_t first_ns = 0;          ///< its first mark
  std::vector<int> workers;       ///< its worker processes (indices into Trace::processes)
};

struct LoaderTies {
  std::vector<LoaderIdentity> loaders;  ///< by first mark (ids count up in that order)
  std::vector<int> worker_loader;       ///< per entry of `workers`: index into loaders, -1 untied
};

/// Ties the waits of `process` and the given worker processes to the DataLoaders that `process`
/// named. Without DataLoader marks (an older shim, or a trace without Python) `loaders` is empty.
LoaderTies TieLoaders(const RunView& run, int process,
                      const std::vector<int>& workers);

}  // namespace trainprof::collector
