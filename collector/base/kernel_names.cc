#include "collector/base/kernel_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <vector>

namespace trainprof::collector {
namespace {

bool IsOpen(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool IsClose(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }
char CloseOf(char c) { return c == '(' ? ')' : c == '<' ? '>' : c == '[' ? ']' : '}'; }

// "operator<", "operator<<", "operator->", "operator()": brackets that are part of a name. At an
// "operator" token the rest of the operator's spelling is skipped.
size_t SkipOperator(std::string_view s, size_t i) {
  static constexpr std::string_view kOperator = "operator";
  if (s.compare(i, kOperator.size(), kOperator) != 0) return i;
  if (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_')) return i;
  size_t j = i + kOperator.size();
  if (s.compare(j, 2, "()") == 0 || s.compare(j, 2, "[]") == 0) return j + 2;
  while (j < s.size() && std::string_view("<>=-!+*/%&|^~,").find(s[j]) != std::string_view::npos) ++j;
  return j;
}

// Index of the bracket matching the one at `open` (s[open] an opening bracket), or npos.
size_t MatchForward(std::string_view s, size_t open) {
  std::vector<char> stack;
  for (size_t i = open; i < s.size(); ++i) {
    const size_t skipped = SkipOperator(s, i);
    if (skipped != i) {
      i = skipped - 1;
      continue;
    }
    if (IsOpen(s[i])) {
      stack.push_back(CloseOf(s[i]));
    } else if (IsClose(s[i])) {
      if (stack.empty() || stack.back() != s[i]) return std::string_view::npos;
      stack.pop_back();
      if (stack.empty()) return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string DemangleKernelName(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  int status = 0;
  const std::string copy(name);  // NUL-terminated
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  if (status != 0 || out == nullptr) return copy;
  return std::string(out.get());
}

std::string ShortenKernelName(std::string_view s) {
  // Top-level pieces, left to right: a template argument list becomes "<...>", a parenthesised
  // group is kept (e.g. "(anonymous namespace)") unless it is the parameter list, a top-level
  // space ends the return type.
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t skipped = SkipOperator(s, i);
    if (skipped != i) {
      out.append(s.substr(i, skipped - i));
      i = skipped;
      continue;
    }
    const char c = s[i];
    if (IsClose(c)) return std::string(s);  // unbalanced
    if (!IsOpen(c)) {
      if (c == ' ') {
        // A top-level space: what came before is the return type ("void ", "at::Tensor ").
        out.clear();
      } else {
        out += c;
      }
      ++i;
      continue;
    }
    const size_t close = MatchForward(s, i);
    if (close == std::string_view::npos) return std::string(s);
    if (c == '<') {
      out += "<...>";
    } else if (c == '(' && (close + 1 == s.size() || s.substr(close + 1) == " const")) {
      break;  // the parameter list: dropped (with a member function's " const")
    } else {
      out.append(s.substr(i, close + 1 - i));
    }
    i = close + 1;
  }
  return out.empty() ? std::string(s) : out;
}

std::string KernelDisplayName(std::string_view mangled, bool full) {
  std::string d = DemangleKernelName(mangled);
  return full ? d : ShortenKernelName(d);
}

bool IsNcclKernel(std::string_view name) {
  const std::string display = name.starts_with("nccl") ? std::string(name) : KernelDisplayName(name, /*full=*/false);
  return display.starts_with("nccl") && display.find("Kernel", 4) != std::string::npos;
}

}  // namespace trainprof::collector
