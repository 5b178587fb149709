// deploy/grafana/boardlab-dashboard.json and deploy/prometheus/ against a live lab: Debian's
// Prometheus scrapes a real boardlab-server while real agents run jobs (passes, a wrong output, a
// model that does not compile, and a board whose runner dies until it is quarantined); then every
// panel expression of the dashboard, with its template variables substituted, is evaluated
// through Prometheus's HTTP API and must return data, and the quarantine alert of
// boardlab-alerts.yml must be pending or firing. A static test checks that the dashboard and the
// rules use only the metrics docs/server.md documents.

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/harness.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kPrometheus[] = "/usr/bin/prometheus";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string RepoFile(const std::string& relative) { return RepoDir() + "/" + relative; }

// The metrics of docs/server.md's "Metrics" table.
std::set<std::string> DocumentedMetrics() {
  std::set<std::string> names;
  const std::string doc = ReadText(RepoFile("docs/server.md"));
  const std::regex row(R"(\n\| `(boardlab_[a-z0-9_]+)` \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it) {
    names.insert((*it)[1]);
  }
  return names;
}

// The boardlab metric families `text` refers to: histogram series (_bucket, _sum, _count) count
// as their family.
std::set<std::string> MetricsIn(const std::string& text, const std::set<std::string>& families) {
  std::set<std::string> names;
  const std::regex metric(R"(boardlab_[a-z0-9_]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), metric);
       it != std::sregex_iterator(); ++it) {
    std::string name = it->str();
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base = name.substr(0, name.size() - std::strlen(suffix));
      if (name.size() > std::strlen(suffix) && name.ends_with(suffix) && families.count(base)) {
        name = base;
      }
    }
    names.insert(name);
  }
  return names;
}

json Dashboard() {
  return json::parse(ReadText(RepoFile("deploy/grafana/boardlab-dashboard.json")), nullptr,
                     /*allow_exceptions=*/false);
}

// Every panel of the dashboard, rows' nested panels included, except the rows themselves.
std::vector<json> Panels(const json& dashboard) {
  std::vector<json> panels;
  for (const json& panel : dashboard["panels"]) {
    if (panel.value("type", "") != "row") panels.push_back(panel);
    for (const json& nested : panel.value("panels", json::array())) panels.push_back(nested);
  }
  return panels;
}

struct Expression {
  std::string panel;
  std::string expr;
};

std::vector<Expression> PanelExpressions(const json& dashboard) {
  std::vector<Expression> expressions;
  for (const json& panel : Panels(dashboard)) {
    for (const json& target : panel.value("targets", json::array())) {
      expressions.push_back({panel.value("title", "?"), target.value("expr", "")});
    }
  }
  return expressions;
}

// Grafana's substitutions for a query over the whole test: "All" board types, a rate window
// that covers everything Prometheus has seen.
std::string Substituted(const std::string& expr) {
  return absl::StrReplaceAll(expr, {{"${board_type}", ".*"},
                                    {"$board_type", ".*"},
                                    {"$__rate_interval", "2m"},
                                    {"$__range", "2m"}});
}

std::string UrlEncoded(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrCat("%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

TEST(DashboardTest, UsesOnlyDocumentedMetricsAndAPrometheusDatasourceVariable) {
  const std::set<std::string> documented = DocumentedMetrics();
  ASSERT_GE(documented.size(), 10u) << "docs/server.md's Metrics table was not found";
  const json dashboard = Dashboard();
  ASSERT_FALSE(dashboard.is_discarded()) << "the dashboard is not JSON";
  bool datasource_variable = false;
  for (const json& variable : dashboard["templating"]["list"]) {
    if (variable["type"] == "datasource" && variable["name"] == "datasource") {
      datasource_variable = variable["query"] == "prometheus";
    }
  }
  EXPECT_TRUE(datasource_variable) << "no $datasource variable of type prometheus";
  const std::vector<Expression> expressions = PanelExpressions(dashboard);
  EXPECT_GE(expressions.size(), 15u);
  for (const json& panel : Panels(dashboard)) {
    EXPECT_EQ(panel["datasource"]["uid"], "${datasource}") << panel["title"];
    for (const json& target : panel["targets"]) {
      EXPECT_EQ(target["datasource"]["uid"], "${datasource}") << panel["title"];
    }
  }
  for (const Expression& e : expressions) {
    for (const std::string& metric : MetricsIn(e.expr, documented)) {
      EXPECT_EQ(documented.count(metric), 1u) << e.panel << ": " << metric << " is not exported";
    }
  }
  const std::string rules = ReadText(RepoFile("deploy/prometheus/boardlab-alerts.yml"));
  ASSERT_FALSE(rules.empty());
  for (const std::string& metric : MetricsIn(rules, documented)) {
    EXPECT_EQ(documented.count(metric), 1u) << "alert rules: " << metric << " is not exported";
  }
}

// A TCP port that was free a moment ago, for Prometheus's web listener.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

class LivePrometheus {
 public:
  // Starts Prometheus scraping `metrics_port` every second with boardlab's alert rules.
  ::testing::AssertionResult Start(ServiceLab& lab) {
    port_ = FreePort();
    const std::string config = lab.WriteFile(
        "prometheus.yml",
        absl::StrCat("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n",
                     "rule_files:\n  - ", RepoFile("deploy/prometheus/boardlab-alerts.yml"), "\n",
                     "scrape_configs:\n  - job_name: boardlab\n    static_configs:\n",
                     "      - targets: [\"127.0.0.1:", lab.metrics_port(), "\"]\n"));
    absl::StatusOr<std::unique_ptr<Process>> process = Process::Start(
        {kPrometheus, "--config.file=" + config, "--storage.tsdb.path=" + lab.Path("tsdb"),
         absl::StrCat("--web.listen-address=127.0.0.1:", port_), "--log.level=warn"},
        lab.Path("prometheus.log"), lab.Path("prometheus.log"));
    if (!process.ok()) return ::testing::AssertionFailure() << process.status();
    process_ = *std::move(process);
    ::testing::AssertionResult ready = WaitFor([&] { return HttpGet(port_, "/-/ready").ok(); },
                                               seconds(30), "Prometheus to be ready");
    if (!ready) return ready << "\n" << ReadText(lab.Path("prometheus.log"));
    return WaitFor([&] { return !Query("up{job=\"boardlab\"} == 1").value_or(json()).empty(); },
                   seconds(30), "Prometheus to scrape boardlab-server");
  }

  // The result array of an instant query, or the error.
  absl::StatusOr<json> Query(const std::string& promql) {
    absl::StatusOr<std::string> body = HttpGet(port_, "/api/v1/query?query=" + UrlEncoded(promql));
    if (!body.ok()) return body.status();
    const json answer = json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded() || answer.value("status", "") != "success") {
      return absl::InternalError("not a successful answer: " + *body);
    }
    return answer["data"]["result"];
  }

  absl::StatusOr<json> Get(const std::string& path) {
    absl::StatusOr<std::string> body = HttpGet(port_, path);
    if (!body.ok()) return body.status();
    const json answer = json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded()) return absl::InternalError("not JSON: " + *body);
    return answer["data"];
  }

 private:
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

// The first finite sample value of an instant query's result, or nullopt.
std::optional<double> FirstFinite(const json& result) {
  for (const json& series : result) {
    const double v = std::strtod(series["value"][1].get<std::string>().c_str(), nullptr);
    if (std::isfinite(v)) return v;
  }
  return std::nullopt;
}

// A runner that dies at once: every run on its board is an infrastructure failure.
std::string DeadRunner(ServiceLab& lab) {
  const std::string path = lab.WriteFile("dead-runner.sh", std::string("#!/bin/sh\nexit 0\n"));
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(DashboardTest, EveryPanelExpressionReturnsDataFromALiveServer) {
  // deploy/install-deps installs prometheus: its absence is a broken machine, not a reason to skip.
  ASSERT_EQ(::access(kPrometheus, X_OK), 0)
      << kPrometheus << " is missing: run the dependency install script (it installs prometheus)";
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer({.config_yaml = "quarantine_after: 1\nretry_budget: 1\n"}));
  ASSERT_TRUE(lab.StartAgent("a", 2));
  ASSERT_TRUE(lab.StartAgentWithConfig(
      "broken",
      absl::StrCat("boardlab_run: ", DeadRunner(lab),
                   "\nboards:\n  - {id: broken-0, type: imxrt700-broken}\n"),
      1));
  LivePrometheus prometheus;
  ASSERT_TRUE(prometheus.Start(lab));

  // Passes in two bursts with scrapes between them, so that rates and quantiles have samples on
  // both sides; one job writes its files, timeline included.
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  int jobs = 0;
  for (int burst = 0; burst < 2; ++burst) {
    for (int i = 0; i < 3; ++i, ++jobs) {
      std::vector<std::string> args = {
          "submit", model, "--input", absl::StrCat("random:", i), "--expect-reference", "--wait"};
      if (jobs == 0) args.insert(args.end(), {"--out", lab.Path("out")});
      ClientResult r = lab.RunClient(args);
      ASSERT_EQ(r.exit_code, 0) << r;
    }
    std::this_thread::sleep_for(milliseconds(2500));
  }
  EXPECT_TRUE(std::filesystem::exists(lab.Path("out/trace.json")));
  EXPECT_TRUE(std::filesystem::exists(lab.Path("out/timeline.svg")));
  ClientResult fail = SubmitWithWrongExpectedOutput(lab, model, lab.Path("out/output0.bin"));
  ASSERT_EQ(fail.exit_code, 1) << fail;
  ClientResult broken = SubmitModelThatDoesNotCompile(lab);
  ASSERT_EQ(broken.exit_code, 3) << broken;
  // The dead runner's board: a retry, a quarantine, then the job times out in the queue.
  ClientResult infra = lab.RunClient(
      {"submit", model, "--board-type", "imxrt700-broken", "--queue-timeout", "2", "--wait"});
  ASSERT_EQ(infra.exit_code, 5) << infra;
  jobs += 3;
  ASSERT_TRUE(WaitFor(
      [&] {
        const json finished =
            prometheus.Query("sum(boardlab_jobs_finished_total)").value_or(json::array());
        return FirstFinite(finished).value_or(0) == jobs;
      },
      seconds(30), "Prometheus to scrape every finished job"));
  std::this_thread::sleep_for(milliseconds(2500));  // more samples after the last change

  for (const Expression& e : PanelExpressions(Dashboard())) {
    const std::string promql = Substituted(e.expr);
    SCOPED_TRACE(e.panel + ": " + promql);
    ASSERT_EQ(promql.find('$'), std::string::npos) << "a variable the test does not substitute";
    absl::StatusOr<json> result = prometheus.Query(promql);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE(result->empty()) << "no data";
    EXPECT_TRUE(FirstFinite(*result).has_value()) << "only NaN or infinite values: " << *result;
  }
  // The board type variable lists every board type.
  absl::StatusOr<json> types =
      prometheus.Get("/api/v1/label/board_type/values?match[]=boardlab_boards");
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_NE(std::find(types->begin(), types->end(), "imxrt700-sim"), types->end()) << *types;
  EXPECT_NE(std::find(types->begin(), types->end(), "imxrt700-broken"), types->end()) << *types;

  // The rules file is loaded and its quarantine alert sees the quarantined board.
  EXPECT_TRUE(WaitFor(
      [&] {
        const json alerts = prometheus.Get("/api/v1/alerts").value_or(json())["alerts"];
        for (const json& alert : alerts) {
          if (alert["labels"]["alertname"] == "BoardlabBoardQuarantined" &&
              alert["labels"]["board_type"] == "imxrt700-broken") {
            return true;
          }
        }
        return false;
      },
      seconds(15), "BoardlabBoardQuarantined to be pending or firing"));
}

}  // namespace
}  // namespace boardlab::testing::service
