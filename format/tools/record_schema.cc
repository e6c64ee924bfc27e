// Prints the record schema (format/trainprof/records.def) for people and tests:
//   trainprof_record_schema markdown   the record table of docs/trace-format.md (between its
//                                      "records:begin" and "records:end" markers;
//                                      scripts/update-trace-format-doc puts it there)
//   trainprof_record_schema json       every record kind as JSON: tag, name, class, since, fields
//                                      (name, encoding: dt, v, z, s), varints, max_bytes; tests
//                                      compare tests/e2e/trace_decode.py's layout table with it
// Exit status 2 on a wrong argument.
#include <cstdio>
#include <cstring>
#include <string>

#include "trainprof/records.h"

namespace {

namespace fmt = trainprof::format;
using fmt::FieldEncoding, fmt::FieldInfo, fmt::kRecords, fmt::RecordClass, fmt::RecordInfo;

const char* ClassName(RecordClass c) {
  switch (c) {
    case RecordClass::kTimed: return "timed";
    case RecordClass::kGpuActivity: return "gpu_activity";
    case RecordClass::kDefinition: return "definition";
  }
  return "?";
}

const char* EncodingName(FieldEncoding e) {
  switch (e) {
    case FieldEncoding::kDt: return "dt";
    case FieldEncoding::kV: return "v";
    case FieldEncoding::kZ: return "z";
    case FieldEncoding::kS: return "s";
  }
  return "?";
}

std::string JsonString(const char* s) {
  std::string out = "\"";
  for (; *s != '\0'; ++s) {
    if (*s == '"' || *s == '\\') out += '\\';
    out += *s;
  }
  return out + "\"";
}

void PrintJson() {
  std::printf("[\n");
  for (size_t i = 0; i < std::size(kRecords); ++i) {
    const RecordInfo& r = kRecords[i];
    std::printf("  {\"tag\": %u, \"name\": %s, \"class\": \"%s\", \"since\": %u, \"varints\": %u, \"max_bytes\": %u,\n",
                static_cast<unsigned>(r.tag), JsonString(r.name).c_str(), ClassName(r.cls), r.since, r.varints,
                r.max_bytes);
    std::printf("   \"fields\": [");
    bool first = true;
    if (r.cls == RecordClass::kTimed) {
      std::printf("{\"name\": \"dt\", \"encoding\": \"dt\"}");
      first = false;
    }
    for (uint8_t k = 0; k < r.field_count; ++k) {
      std::printf("%s{\"name\": %s, \"encoding\": \"%s\"}", first ? "" : ", ", JsonString(r.fields[k].name).c_str(),
                  EncodingName(r.fields[k].encoding));
      first = false;
    }
    std::printf("]}%s\n", i + 1 < std::size(kRecords) ? "," : "");
  }
  std::printf("]\n");
}

// One field as the table lists it: "z code" for a signed field, "length, bytes" for a string.
std::string FieldText(const FieldInfo& f) {
  if (f.encoding == FieldEncoding::kS) return "length, " + std::string(f.name);
  if (f.encoding == FieldEncoding::kZ && std::strcmp(f.name, "zs") != 0 && std::strcmp(f.name, "ze") != 0) {
    return "z " + std::string(f.name);
  }
  return f.name;
}

void PrintMarkdown() {
  std::printf("| tag | name | class | fields | meaning |\n| --- | --- | --- | --- | --- |\n");
  for (const RecordInfo& r : kRecords) {
    std::string fields = r.cls == RecordClass::kTimed ? "dt" : "";
    std::string notes;
    for (uint8_t k = 0; k < r.field_count; ++k) {
      const FieldInfo& f = r.fields[k];
      fields += (fields.empty() ? "" : ", ") + FieldText(f);
      if (f.doc[0] != '\0') notes += std::string("; ") + f.name + ": " + f.doc;
    }
    std::string since = r.since > 1 ? " (version " + std::to_string(r.since) + ")" : "";
    std::printf("| %u | %s | %s | %s | %s%s%s |\n", static_cast<unsigned>(r.tag), r.name, ClassName(r.cls),
                fields.c_str(), r.doc, notes.c_str(), since.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc == 2 ? argv[1] : "";
  if (what == "json") {
    PrintJson();
  } else if (what == "markdown") {
    PrintMarkdown();
  } else {
    std::fprintf(stderr, "trainprof: usage: trainprof_record_schema markdown|json\n");
    return 2;
  }
  return 0;
}
