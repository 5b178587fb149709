#include "runtime/cli/run_cases.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace boardlab::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kBin = ".bin";
constexpr size_t kMaxCaseNameLength = 128;

enum class Role { kPlain, kInput, kOutput };

// What a case file's name says: NAME.input<i>.bin, NAME.output<i>.bin (no digits: 0) or NAME.bin.
struct CaseFileName {
  std::string case_name;
  Role role = Role::kPlain;
  size_t index = 0;
};

// "input3" -> 3 for prefix "input"; nullopt when `suffix` is not the prefix and at most 6 digits.
std::optional<size_t> RoleIndex(std::string_view suffix, std::string_view prefix) {
  if (suffix.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = suffix.substr(prefix.size());
  if (digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return digits.empty() ? 0 : std::stoul(std::string(digits));
}

CaseFileName ParseCaseFileName(std::string_view file) {
  const std::string_view stem = file.substr(0, file.size() - kBin.size());
  const size_t dot = stem.rfind('.');
  if (dot != std::string_view::npos && dot > 0) {
    const std::string_view suffix = stem.substr(dot + 1);
    for (const auto& [prefix, role] :
         {std::pair{std::string_view("input"), Role::kInput}, {"output", Role::kOutput}}) {
      if (std::optional<size_t> index = RoleIndex(suffix, prefix)) {
        return {std::string(stem.substr(0, dot)), role, *index};
      }
    }
  }
  return {std::string(stem), Role::kPlain, 0};
}

// Appended piece by piece: GCC 12 at -O3 reports `"'" + std::string` as an overlapping memcpy
// (a false -Wrestrict) and the Release build treats warnings as errors.
std::string Quoted(const fs::path& path) {
  std::string quoted = "'";
  quoted += path.string();
  quoted += "'";
  return quoted;
}

// The file name a case's tensor `index` takes, for messages: NAME.bin for a model with one such
// tensor, NAME.input<i>.bin otherwise.
std::string SlotFileName(const std::string& name, bool inputs, size_t index, size_t count) {
  if (count == 1) return name + ".bin or " + name + (inputs ? ".input" : ".output") + ".bin";
  return name + (inputs ? ".input" : ".output") + std::to_string(index) + ".bin";
}

// Each case's files of one role (inputs or expected outputs), by index.
using CaseSlots = std::map<std::string, std::vector<std::string>>;

struct RoleScan {
  const char* what;  // "input" or "expected output"
  bool inputs;
  const std::vector<TensorInfo>* tensors;
  bool shared_directory;  // the inputs and expected outputs are one directory
};

// Checks one case file against the model's tensor and puts it into its case's slot.
bool AddCaseFile(const fs::path& path, uintmax_t size, const CaseFileName& parsed,
                 const RoleScan& scan, CaseSlots& slots, std::string& error) {
  if (std::string why = InvalidCaseName(parsed.case_name); !why.empty()) {
    error = Quoted(path) + ": " + why;
    return false;
  }
  const size_t count = scan.tensors->size();
  if (parsed.index >= count) {
    const std::string role = scan.inputs ? "input" : "output";
    error = Quoted(path) + ": the model has " + std::to_string(count) + " " + role +
            (count == 1 ? "" : "s") + "; a case's files are " +
            (count == 1
                 ? "NAME.bin"
                 : "NAME." + role + "0.bin ... NAME." + role + std::to_string(count - 1) + ".bin");
    return false;
  }
  const TensorInfo& tensor = (*scan.tensors)[parsed.index];
  if (size != tensor.bytes) {
    error = Quoted(path) + " has " + std::to_string(size) + " bytes; " + scan.what + " " +
            std::to_string(parsed.index) + " of the model (" + tensor.Describe() + ") takes " +
            std::to_string(tensor.bytes);
    return false;
  }
  std::vector<std::string>& files = slots[parsed.case_name];
  files.resize(count);
  if (!files[parsed.index].empty()) {
    error = Quoted(files[parsed.index]) + " and " + Quoted(path) + " are both " + scan.what + " " +
            std::to_string(parsed.index) + " of case '" + parsed.case_name + "'";
    return false;
  }
  files[parsed.index] = path.string();
  return true;
}

// The *.bin files of `dir` in name order (regular files or links to them, not hidden).
bool ListBinFiles(const std::string& dir, const char* option, std::vector<fs::path>& files,
                  std::string& error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    error = std::string(option) + " " + Quoted(dir) + ": not a directory";
    return false;
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name.size() <= kBin.size() ||
        name.compare(name.size() - kBin.size(), kBin.size(), kBin) != 0) {
      continue;
    }
    std::error_code file_ec;
    if (fs::is_regular_file(it->path(), file_ec)) files.push_back(it->path());
  }
  if (ec) {
    error = std::string(option) + " " + Quoted(dir) + ": cannot list it: " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  return true;
}

// The case files of one role in `dir`.
bool ScanRole(const std::string& dir, const char* option, const RoleScan& scan, CaseSlots& slots,
              std::string& error) {
  std::vector<fs::path> files;
  if (!ListBinFiles(dir, option, files, error)) return false;
  for (const fs::path& path : files) {
    const CaseFileName parsed = ParseCaseFileName(path.filename().string());
    if (parsed.role == (scan.inputs ? Role::kOutput : Role::kInput)) continue;  // the other role's
    if (parsed.role == Role::kPlain && scan.shared_directory) {
      error = Quoted(path) + ": inputs and expected outputs share " + Quoted(dir) +
              ", so name them NAME.input.bin and NAME.output.bin (NAME.input<i>.bin, "
              "NAME.output<i>.bin for several)";
      return false;
    }
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec) {
      error = "reading " + Quoted(path) + ": " + ec.message();
      return false;
    }
    if (!AddCaseFile(path, size, parsed, scan, slots, error)) return false;
  }
  return true;
}

// Every case has a file for each tensor of the role.
bool CheckComplete(const CaseSlots& slots, const std::string& dir, const RoleScan& scan,
                   std::string& error) {
  for (const auto& [name, files] : slots) {
    for (size_t i = 0; i < files.size(); ++i) {
      if (!files[i].empty()) continue;
      error = "case '" + name + "' has no " + scan.what + " " + std::to_string(i) + " in " +
              Quoted(dir) + " (" + SlotFileName(name, scan.inputs, i, files.size()) + ")";
      return false;
    }
  }
  return true;
}

bool CheckCaseCount(size_t count, const std::string& where, std::string& error) {
  if (count == 0) {
    error = "no cases in " + where +
            ": no NAME.bin files (NAME.input<i>.bin for a model with several inputs)";
    return false;
  }
  if (count > kMaxCases) {
    error = std::to_string(count) + " cases in " + where + "; a run takes at most " +
            std::to_string(kMaxCases) + ": split them into several jobs";
    return false;
  }
  return true;
}

bool IsSameDirectory(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// The expected outputs pair with the inputs by case name, both ways.
bool PairExpected(const CaseSlots& inputs, const CaseSlots& expected, const std::string& inputs_dir,
                  const std::string& expected_dir, size_t num_outputs, std::string& error) {
  for (const auto& [name, files] : expected) {
    if (inputs.count(name) > 0) continue;
    error = Quoted(*std::find_if(files.begin(), files.end(),
                                 [](const std::string& f) { return !f.empty(); })) +
            ": no case '" + name + "' in the inputs " + Quoted(inputs_dir) +
            " (an expected output pairs with the inputs of the same name)";
    return false;
  }
  for (const auto& [name, files] : inputs) {
    if (expected.count(name) > 0) continue;
    error = "case '" + name + "' has no expected output in " + Quoted(expected_dir) + " (" +
            SlotFileName(name, /*inputs=*/false, 0, num_outputs) + ")";
    return false;
  }
  return true;
}

// --- manifest ------------------------------------------------------------------------------

bool IsRandomSpec(const std::string& spec) { return spec.rfind("random:", 0) == 0; }

bool IsValidSeed(const std::string& spec) {
  const std::string digits = spec.substr(7);
  if (digits.empty() || digits.size() > 20 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  return digits.size() < 20 || digits <= "18446744073709551615";
}

// One input or expected file of a manifest case: resolved against the manifest's directory and
// checked against its tensor.
bool ResolveManifestFile(const fs::path& base, const std::string& where, const std::string& what,
                         const TensorInfo& tensor, std::string& file, std::string& error) {
  if (what == "input" && IsRandomSpec(file)) {
    if (IsValidSeed(file)) return true;
    error = where + ": '" + file + "' is no random:SEED (SEED a number up to 2^64-1)";
    return false;
  }
  const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : base / file;
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || !fs::is_regular_file(path, ec)) {
    error = where + ": cannot read " + Quoted(path) + ": " +
            (ec ? ec.message() : std::string("not a file"));
    return false;
  }
  if (size != tensor.bytes) {
    error = where + ": " + Quoted(path) + " has " + std::to_string(size) + " bytes; " + what +
            " of the model (" + tensor.Describe() + ") takes " + std::to_string(tensor.bytes);
    return false;
  }
  file = path.string();
  return true;
}

// A manifest case's "inputs" or "expected": one string per tensor.
bool ReadManifestFiles(const json& value, const std::string& where, const char* key,
                       const std::vector<TensorInfo>& tensors, const fs::path& base,
                       std::vector<std::string>& files, std::string& error) {
  const std::string what = std::string(key) == "inputs" ? "input" : "expected output";
  if (!value.is_array() ||
      !std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); })) {
    error = where + ": \"" + key + "\" must be a list of file names";
    return false;
  }
  if (value.size() != tensors.size()) {
    const std::string role = what == "input" ? "input" : "output";
    error = where + ": " + std::to_string(value.size()) + " " + key + " given; the model has " +
            std::to_string(tensors.size()) + " " + role + (tensors.size() == 1 ? "" : "s");
    return false;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string file = value[i].get<std::string>();
    const std::string at = where + " " + what + " " + std::to_string(i);
    if (!ResolveManifestFile(base, at, what, tensors[i], file, error)) return false;
    files.push_back(std::move(file));
  }
  return true;
}

bool ReadManifestCase(const json& entry, size_t index, const ModelIo& io, const fs::path& base,
                      CaseFiles& out, std::string& error) {
  std::string where = "case " + std::to_string(index);
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
      !entry.contains("inputs")) {
    error = where +
            ": each case is an object with \"name\", \"inputs\" and optionally "
            "\"expected\"";
    return false;
  }
  for (const auto& [key, value] : entry.items()) {
    if (key != "name" && key != "inputs" && key != "expected") {
      error = where + ": unknown key '" + key + "' (known: name, inputs, expected)";
      return false;
    }
  }
  out.name = entry["name"].get<std::string>();
  if (std::string why = InvalidCaseName(out.name); !why.empty()) {
    error = where + ": " + why;
    return false;
  }
  where = "case '" + out.name + "'";
  if (!ReadManifestFiles(entry["inputs"], where, "inputs", io.inputs, base, out.inputs, error)) {
    return false;
  }
  return !entry.contains("expected") || ReadManifestFiles(entry["expected"], where, "expected",
                                                          io.outputs, base, out.expected, error);
}

std::string NumberText(double value) {
  if (std::isinf(value)) return "inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

// "612.50 us".
std::string MicrosecondsText(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f us", us);
  return text;
}

}  // namespace

std::string InvalidCaseName(std::string_view name) {
  if (name.empty()) return "a case needs a name";
  if (name.size() > kMaxCaseNameLength) {
    return "case name '" + std::string(name.substr(0, 32)) + "...' is longer than " +
           std::to_string(kMaxCaseNameLength) + " characters";
  }
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '/' && c != '\\';
  });
  if (!printable || name[0] == '.') {
    return "case name '" + std::string(name) +
           "' must be printable ASCII without '/' or '\\', not starting with '.'";
  }
  return "";
}

bool ReadCaseDirectories(const std::string& inputs_dir, const std::string& expected_dir,
                         const ModelIo& io, std::vector<CaseFiles>* cases, std::string* error) {
  const bool shared = !expected_dir.empty() && IsSameDirectory(inputs_dir, expected_dir);
  CaseSlots inputs, expected;
  const RoleScan input_scan{"input", true, &io.inputs, shared};
  if (!ScanRole(inputs_dir, "--inputs", input_scan, inputs, *error) ||
      !CheckComplete(inputs, inputs_dir, input_scan, *error) ||
      !CheckCaseCount(inputs.size(), "'" + inputs_dir + "'", *error)) {
    return false;
  }
  if (!expected_dir.empty()) {
    const RoleScan expected_scan{"expected output", false, &io.outputs, shared};
    if (!ScanRole(expected_dir, "--expected", expected_scan, expected, *error) ||
        !CheckComplete(expected, expected_dir, expected_scan, *error) ||
        !PairExpected(inputs, expected, inputs_dir, expected_dir, io.outputs.size(), *error)) {
      return false;
    }
  }
  cases->clear();
  for (auto& [name, files] : inputs) {
    CaseFiles c{name, std::move(files), {}};
    if (!expected_dir.empty()) c.expected = std::move(expected[name]);
    cases->push_back(std::move(c));
  }
  return true;
}

bool ReadCaseManifest(const std::string& path, const ModelIo& io, std::vector<CaseFiles>* cases,
                      std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "reading cases manifest " + Quoted(path) + ": cannot open it";
    return false;
  }
  const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("cases") ||
      !doc["cases"].is_array() || doc.size() != 1) {
    *error = Quoted(path) +
             ": a cases manifest is a JSON object {\"cases\": [{\"name\": ..., \"inputs\": "
             "[...], \"expected\": [...]}, ...]}";
    return false;
  }
  const json& list = doc["cases"];
  if (!CheckCaseCount(list.size(), Quoted(path), *error)) return false;
  const fs::path base = fs::path(path).parent_path();
  std::set<std::string> names;
  cases->clear();
  for (size_t i = 0; i < list.size(); ++i) {
    CaseFiles c;
    if (!ReadManifestCase(list[i], i, io, base, c, *error)) {
      *error = Quoted(path) + ": " + *error;
      return false;
    }
    if (!names.insert(c.name).second) {
      *error = Quoted(path) + ": case '" + c.name + "' is given twice";
      return false;
    }
    if (!cases->empty() && cases->front().expected.empty() != c.expected.empty()) {
      *error = Quoted(path) + ": case '" + c.name + "'" +
               (c.expected.empty() ? " has no" : " has") + " \"expected\" and case '" +
               cases->front().name + "'" + (c.expected.empty() ? " has" : " has not") +
               ": give expected outputs for every case or for none";
      return false;
    }
    cases->push_back(std::move(c));
  }
  return true;
}

std::string CaseManifestJson(const std::vector<CaseFiles>& cases) {
  json list = json::array();
  for (const CaseFiles& c : cases) {
    json entry = {{"name", c.name}, {"inputs", c.inputs}};
    if (!c.expected.empty()) entry["expected"] = c.expected;
    list.push_back(std::move(entry));
  }
  return json{{"cases", list}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool HasClassScores(const ModelIo& io) {
  if (io.outputs.size() != 1) return false;
  const std::vector<int64_t>& shape = io.outputs[0].shape;
  if (shape.empty() || shape.size() > 2 || shape.back() <= 1) return false;
  return shape.size() == 1 || shape[0] == 1;
}

std::vector<OutputVerdict> OutputVerdictsOf(const json& outputs) {
  std::vector<OutputVerdict> verdicts;
  if (!outputs.is_array()) return verdicts;
  for (const json& o : outputs) {
    OutputVerdict verdict;
    const auto v = o.find("verification");
    if (o.is_object() && v != o.end() && v->is_object()) {
      verdict.checked = true;
      verdict.pass = v->value("pass", false);
      verdict.max_abs_diff = v->value("max_abs_diff", 0.0);
      verdict.mismatches = v->value("mismatches", uint64_t{0});
      verdict.elements = v->value("elements", uint64_t{0});
      verdict.error = v->value("error", "");
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

json OutputsJson(const std::vector<OutputVerdict>& verdicts) {
  json outputs = json::array();
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const OutputVerdict& v = verdicts[i];
    json entry = {{"index", i}};
    if (!v.error.empty()) {
      entry["verification"] = {{"pass", false}, {"error", v.error}};
    } else if (v.checked) {
      entry["verification"] = {{"pass", v.pass},
                               {"max_abs_diff", v.max_abs_diff},
                               {"mismatches", v.mismatches},
                               {"elements", v.elements}};
    }
    outputs.push_back(std::move(entry));
  }
  return outputs;
}

bool CaseOutcome::verified() const {
  return std::any_of(outputs.begin(), outputs.end(),
                     [](const OutputVerdict& o) { return o.checked; });
}

bool CaseOutcome::passed() const {
  return !no_output && std::all_of(outputs.begin(), outputs.end(),
                                   [](const OutputVerdict& o) { return !o.checked || o.pass; });
}

std::optional<double> CaseOutcome::max_abs_diff() const {
  std::optional<double> largest;
  for (const OutputVerdict& o : outputs) {
    if (!o.checked) continue;
    // NaN against a number, or bytes the verifier could not compare: the largest difference.
    const double diff = !o.error.empty() || std::isnan(o.max_abs_diff) ? INFINITY : o.max_abs_diff;
    largest = std::max(largest.value_or(diff), diff);
  }
  return largest;
}

void JudgeTop1(const ModelIo& io, std::string_view output0, std::string_view expected0,
               CaseOutcome& outcome) {
  if (!HasClassScores(io) || expected0.empty() || output0.size() != expected0.size()) return;
  outcome.top1 = ArgMax(output0, io.outputs[0].type);
  outcome.top1_expected = ArgMax(expected0, io.outputs[0].type);
}

CaseSummary Summarize(const std::vector<CaseOutcome>& outcomes) {
  CaseSummary summary;
  for (const CaseOutcome& c : outcomes) {
    ++summary.cases;
    if (c.passed()) ++summary.passed;
    if (c.no_output) ++summary.no_output;
    if (c.verified()) ++summary.verified;
    if (std::optional<double> diff = c.max_abs_diff();
        diff && (!summary.max_abs_diff || *diff > *summary.max_abs_diff)) {
      summary.max_abs_diff = diff;
      summary.max_abs_diff_case = c.name;
    }
    if (c.top1 && c.top1_expected) {
      ++summary.top1_compared;
      if (*c.top1 == *c.top1_expected) ++summary.top1_agreed;
    }
    // An inference a streaming op ended early is no measure of the model's latency.
    if (c.us && !c.no_output && (!summary.slowest_us || *c.us > *summary.slowest_us)) {
      summary.slowest_us = c.us;
      summary.slowest_case = c.name;
    }
  }
  return summary;
}

std::string CasesVerdict(const CaseSummary& summary) {
  if (summary.failed() > 0) return "fail";
  if (summary.no_output == summary.cases && summary.cases > 0) return "no_output";
  return summary.verified == 0 ? "unverified" : "pass";
}

std::string DescribeSummary(const CaseSummary& s) {
  std::string text =
      "cases: " + std::to_string(s.passed) + " of " + std::to_string(s.cases) + " passed";
  // Cases without output were not checked either; they are counted apart from the unverified.
  if (s.unverified() > 0) text += " (" + std::to_string(s.unverified()) + " unverified)";
  if (s.no_output > 0) text += ", " + std::to_string(s.no_output) + " no output yet";
  if (s.max_abs_diff) {
    text += ", max abs diff " + NumberText(*s.max_abs_diff);
    if (*s.max_abs_diff > 0) text += " (case " + s.max_abs_diff_case + ")";
  }
  if (s.top1_compared > 0) {
    char percent[32];
    std::snprintf(
        percent, sizeof(percent), "%.1f%%",
        100.0 * static_cast<double>(s.top1_agreed) / static_cast<double>(s.top1_compared));
    text += std::string(", top-1 agreement ") + percent + " (" + std::to_string(s.top1_agreed) +
            " of " + std::to_string(s.top1_compared) + ")";
  }
  return text;
}

std::string DescribeCase(const CaseOutcome& c) {
  std::string text = "case " + c.name + ": " +
                     (c.no_output     ? "NO OUTPUT YET"
                      : !c.verified() ? "UNVERIFIED"
                      : c.passed()    ? "PASS"
                                      : "FAIL");
  std::string details;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    const OutputVerdict& o = c.outputs[i];
    if (!o.checked) continue;
    details += (details.empty() ? "" : "; ") + std::string("output ") + std::to_string(i) + ": ";
    if (!o.error.empty()) {
      details += o.error;
      continue;
    }
    details += "max abs diff " + NumberText(o.max_abs_diff);
    if (!o.pass && o.elements > 0) {  // the API's checks carry no element counts
      details += ", " + std::to_string(o.mismatches) + " of " + std::to_string(o.elements) +
                 " elements outside atol";
    }
  }
  if (c.top1 && c.top1_expected) {
    details += (details.empty() ? "" : "; ") + std::string("top-1 ") + std::to_string(*c.top1) +
               (*c.top1 == *c.top1_expected ? " agrees"
                                            : ", expected " + std::to_string(*c.top1_expected));
  }
  if (!details.empty()) text += " (" + details + ")";
  if (c.us) text += " " + MicrosecondsText(*c.us);
  if (c.early_inferences > 0) text += "; " + EarlyEndedText(c);
  return text;
}

std::string EarlyEndedText(const CaseOutcome& c) {
  std::string text = "ended early: " + std::to_string(c.early_inferences) +
                     (c.early_inferences == 1 ? " inference" : " inferences");
  if (c.early_us) text += ", " + MicrosecondsText(*c.early_us);
  return text;
}

json TimesJson(const CaseOutcome& c) {
  return {{"total_us", c.us ? json(*c.us) : json(nullptr)},
          {"ticks", c.ticks},
          {"early_inferences", c.early_inferences},
          {"early_total_us", c.early_us ? json(*c.early_us) : json(nullptr)},
          {"early_ticks", c.early_ticks}};
}

json CaseJson(const CaseOutcome& c) {
  const std::optional<double> diff = c.max_abs_diff();
  json entry = {{"name", c.name},
                {"verdict", c.no_output     ? "no_output"
                            : !c.verified() ? "unverified"
                            : c.passed()    ? "pass"
                                            : "fail"},
                {"max_abs_diff", diff && std::isfinite(*diff) ? json(*diff) : json(nullptr)},
                {"outputs", c.detail.is_null() ? OutputsJson(c.outputs) : c.detail}};
  entry.update(TimesJson(c));
  if (c.top1 && c.top1_expected) {
    entry["top1"] = {{"class", *c.top1},
                     {"expected", *c.top1_expected},
                     {"agrees", *c.top1 == *c.top1_expected}};
  }
  return entry;
}

json SummaryJson(const CaseSummary& s) {
  const bool finite_diff = s.max_abs_diff && std::isfinite(*s.max_abs_diff);
  return {{"cases", s.cases},
          {"passed", s.passed},
          {"failed", s.failed()},
          {"no_output", s.no_output},
          {"verified", s.verified},
          {"max_abs_diff", finite_diff ? json(*s.max_abs_diff) : json(nullptr)},
          {"max_abs_diff_case", s.max_abs_diff_case},
          {"top1_compared", s.top1_compared},
          {"top1_agreed", s.top1_agreed},
          {"slowest_us", s.slowest_us ? json(*s.slowest_us) : json(nullptr)},
          {"slowest_case", s.slowest_case}};
}

json CaseResultsJson(const std::vector<CaseOutcome>& outcomes, const std::string& clock) {
  json cases = json::array();
  for (const CaseOutcome& c : outcomes) cases.push_back(CaseJson(c));
  return {{"clock", clock}, {"cases", cases}, {"case_summary", SummaryJson(Summarize(outcomes))}};
}

std::string CasesText(const std::vector<CaseOutcome>& outcomes) {
  std::string text;
  for (const CaseOutcome& c : outcomes) text += DescribeCase(c) + "\n";
  return text + DescribeSummary(Summarize(outcomes)) + "\n";
}

bool WriteCaseResults(const std::string& path, const std::vector<CaseOutcome>& outcomes,
                      const std::string& clock, std::string* error) {
  std::ofstream out(path, std::ios::trunc);
  out << CaseResultsJson(outcomes, clock).dump(2, ' ', false, json::error_handler_t::replace)
      << "\n";
  if (!out) *error = "writing '" + path + "' failed";
  return static_cast<bool>(out);
}

}  // namespace boardlab::run
