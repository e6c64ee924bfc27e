// The file's ids mapped into the string pool once every definition is seen, and the stacks' refs
// (trace_decoder.h).
#include "collector/read/trace_decoder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "collector/read/record_scan.h"
#include "trainprof/phases.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector::decode {

namespace fr = format::rec;
using namespace scan;  // NOLINT: the record scanning constants and ReadVarints

void Decoder::EndOfData() {
  if (!src_->error().empty()) {
    st_.truncated = true;
    Error(Loss::read_errors, src_->error());
  } else if (shrank_ || (size_ > 0 && src_->View(size_ - 1, 1).empty())) {
    st_.truncated = true;
    Error(Loss::read_errors, "the file shrank while it was read (was " + Num(size_) + " bytes): read up to where it ended");
  }
  src_ = nullptr;
  CheckClocksAgainstRecords();
}

void Decoder::Resolve(StringPool* pool) {
  StringPool& pool_ = *pool;
  // Definitions in the order the file gave them: pool ids do not depend on anything else.
  std::vector<StringId> defined(defined_strings_.size());
  for (size_t i = 0; i < defined.size(); ++i) defined[i] = pool_.Intern(defined_strings_.bytes(static_cast<uint32_t>(i)));
  // String refs → pool ids; ids never defined in this file become "<string #N>".
  std::vector<StringId> string_pool(string_ref_raw_.size(), 0);
  uint64_t undefined = 0, first_undefined = 0;
  for (size_t r = 1; r < string_ref_raw_.size(); ++r) {
    uint64_t raw = string_ref_raw_[r];
    const uint32_t def = defined_strings_.Find(raw);
    if (r == overflow_ref_) {
      string_pool[r] = pool_.Intern("<undefined strings>");
    } else if (def != UINT32_MAX) {
      string_pool[r] = defined[def];
    } else {
      if (undefined++ == 0) first_undefined = raw;
      string_pool[r] = pool_.Intern("<string #" + Num(raw) + ">");
    }
  }
  std::vector<StringId> domain_pool(domain_ref_raw_.size(), 0);
  uint64_t undefined_domains = 0, first_undefined_domain = 0;
  for (size_t r = 1; r < domain_ref_raw_.size(); ++r) {
    uint64_t raw = domain_ref_raw_[r];
    auto it = domain_names_.find(raw);
    if (it == domain_names_.end()) {
      if (undefined_domains++ == 0) first_undefined_domain = raw;
      domain_pool[r] = pool_.Intern("<domain #" + Num(raw) + ">");
      continue;
    }
    // Name id 0 is "no name" (nvtxDomainCreateA(NULL)): an unnamed domain, never an error.
    const uint32_t s = it->second == 0 ? UINT32_MAX : defined_strings_.Find(it->second);
    if (s != UINT32_MAX && defined[s] != 0) {
      domain_pool[r] = defined[s];
    } else {
      if (it->second != 0 && s == UINT32_MAX && undefined++ == 0) first_undefined = it->second;
      domain_pool[r] = pool_.Intern("<domain #" + Num(raw) + ">");
    }
  }
  // An id nothing defines, in a file whose records all decoded and whose chunks are all there,
  // is the program's doing (the writer stores a definition before any use): NVTX misuse, counted
  // per process. In a file with other damage the definition may be what was lost: damage.
  if (overflow_uses_ > 0) {
    Error(Loss::undefined_string_uses,
          "more than " + Num(max_undefined_refs_) + " string ids used before any definition (forged or damaged): " +
              Num(overflow_uses_) + " further uses shown as <undefined strings>",
          overflow_uses_);
  }
  const bool intact = st_.errors.empty() && errors_dropped_ == 0 && !st_.truncated;
  if (intact) {
    img_.undefined_names = undefined;
    img_.undefined_domains = undefined_domains;
  } else {
    if (undefined > 0) {
      Error(Loss::undefined_ids,
            "undefined string id " + Num(first_undefined) + (undefined > 1 ? " (" + Num(undefined) + " ids in all)" : ""),
            undefined);
    }
    if (undefined_domains > 0) {
      Error(Loss::undefined_ids,
            "undefined domain id " + Num(first_undefined_domain) +
                (undefined_domains > 1 ? " (" + Num(undefined_domains) + " ids in all)" : ""),
            undefined_domains);
    }
  }
  for (NvtxEvent& e : img_.nvtx) {
    e.name = string_pool[e.name];
    e.domain = domain_pool[e.domain];
  }
  img_.string_of_ref = string_pool;
  img_.domain_of_ref = domain_pool;
  // Operators still open: the process ended (or the file was cut) inside them.
  ops_.CloseAll(std::max(img_.end_ns, img_.last_record_ns), &img_.host_ops);
  for (HostOp& h : img_.host_ops) h.name = string_pool[h.name];
  // The summary's keys were refs too; two refs can name the same string (a name defined twice
  // under different ids), so keys may merge.
  NvtxSummary by_ref = matcher_.Finish();
  for (RangeSamples& r : by_ref.ranges) {
    r.key.domain = domain_pool[r.key.domain];
    r.key.name = string_pool[r.key.name];
  }
  for (MarkCount& m : by_ref.marks) {
    m.domain = domain_pool[m.domain];
    m.name = string_pool[m.name];
  }
  img_.nvtx_summary.Merge(std::move(by_ref));
  ResolveStacks(string_pool, domain_pool);
  for (ProcessEvent& pe : img_.process_events) pe.text = string_pool[pe.text];
  if (index_) {
    cuda_.CollectUnreturned();
    cuda_.Track(nullptr, nullptr, nullptr);
    if (overflow_ref_ != 0) {
      index_.reset();  // refs of undefined ids depend on the order of their uses
    } else if (unreturned_.size() > CudaChunkIndex::kMaxOpenCalls) {
      index_.reset();  // each would be in every window after its enter (a forged file)
    } else {
      index_->version = img_.version;
      if (tsc_) index_->tsc = tsc_to_ns_;
      index_->unreturned = std::move(unreturned_);
      index_->pool_of_ref = string_pool;
      index_->small_string_ref = small_string_ref_;
      index_->string_ref_of = string_ref_of_;
    }
  }
  cuda_.Resolve(string_pool);
  // Kernel ends noted before their name was defined: only NCCL kernels' stay.
  std::unordered_map<StringId, bool> nccl;
  std::erase_if(img_.nccl_kernel_ends, [&](const KernelEnd& e) {
    auto [it, inserted] = nccl.try_emplace(e.name, false);
    if (inserted) it->second = IsNcclKernel(pool->Get(e.name));
    return !it->second;
  });
  img_.role = string_pool[role_ref_];
  // Rank variables learned after start win over the header's (docs/trace-format.md, PROCESS_ENV),
  // found through an index by name: a damaged file can hold a million of them, all different.
  std::unordered_map<std::string, size_t> env_index;  // name → its first entry in img_.env
  for (size_t i = 0; i < img_.env.size(); ++i) env_index.try_emplace(img_.env[i].first, i);
  for (uint32_t ref : env_refs_) {
    const std::string_view nv = pool_.Get(string_pool[ref]);
    const size_t eq = nv.find('=');
    if (nv.empty() || eq == 0) continue;
    std::string name(nv.substr(0, eq)), value(eq == std::string_view::npos ? "" : nv.substr(eq + 1));
    auto [it, inserted] = env_index.try_emplace(name, img_.env.size());
    if (inserted) {
      img_.env.emplace_back(std::move(name), std::move(value));
    } else {
      img_.env[it->second].second = std::move(value);
    }
  }
  for (ThreadInfo& t : img_.threads) {
    auto it = thread_names_.find(t.tid);
    if (it != thread_names_.end()) t.name = string_pool[it->second];
  }
  if (errors_dropped_ > 0) {
    st_.errors.push_back("and " + Num(errors_dropped_) + (errors_dropped_ == 1 ? " more problem" : " more problems"));
  }
}

void Decoder::ResolveStacks(const std::vector<StringId>& string_pool, const std::vector<StringId>& domain_pool) {
  ImageStacks& st = img_.stacks;
  for (Stack& s : st.stacks) {
    for (StackFrame& fr : s.frames) {
      if (!fr.python) continue;
      fr.function = string_pool[fr.function];
      fr.file = string_pool[fr.file];
    }
  }
  std::sort(st.stacks.begin(), st.stacks.end(), [](const Stack& a, const Stack& b) { return a.id < b.id; });
  st.start_realtime_ns = img_.start_realtime_ns;
  for (Module& m : st.modules) {
    m.path = string_pool[m.path];
    m.build_id = string_pool[m.build_id];
  }
  st.uses = matcher_.TakeUses();
  for (StackUse& u : st.uses) {
    u.domain = domain_pool[u.domain];
    u.name = string_pool[u.name];
  }
  // Uses of ids that no STACK defines: damage (a lost chunk held the definition); they stay, as
  // "<stack #N>" frames-less call sites.
  uint64_t undefined = 0, first = 0;
  auto check = [&](uint64_t id) {
    if (id != 0 && st.Find(id) == nullptr && undefined++ == 0) first = id;
  };
  for (const StackUse& u : st.uses) check(u.stack);
  for (const CudaCall& c : img_.cuda.calls) check(c.stack);
  for (const Sample& smp : st.samples) check(smp.stack);
  if (undefined > 0) {
    Error(Loss::undefined_ids, "undefined stack id " + Num(first) + (undefined > 1 ? " (" + Num(undefined) + " uses in all)" : ""),
          undefined);
  }
}

}  // namespace trainprof::collector::decode
