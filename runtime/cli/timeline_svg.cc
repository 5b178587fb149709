#include "runtime/cli/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "runtime/cli/xml_chars.h"

namespace boardlab::run {
namespace {

// Layout, in SVG user units (pixels at 100%).
constexpr double kWidth = 1200;
constexpr double kMargin = 20;
constexpr double kPlotWidth = kWidth - 2 * kMargin;
constexpr double kHeaderHeight = 76;
constexpr double kLaneTitleHeight = 16;
constexpr double kLaneBarHeight = 30;
constexpr double kLaneGap = 10;
constexpr double kAxisHeight = 44;
constexpr double kLegendRow = 18;
constexpr double kCharWidth = 6.6;      // average advance of an 11 px sans-serif character
constexpr double kMinSliceWidth = 1.5;  // so that no slice disappears

std::string XmlText(std::string_view text) {
  const std::vector<std::string_view> chars = XmlChars(text);
  return EscapedXmlChars(chars, chars.size());
}

// What fits in `width` pixels: the whole label, its start with an ellipsis, or nothing.
std::string FittedLabel(const std::string& label, double width) {
  const std::vector<std::string_view> chars = XmlChars(label);
  // Kept in double until it is known to be small: a malformed ETDump's slice can be wider than
  // any integer (or NaN), and converting that is undefined.
  const double fit = (width - 6) / kCharWidth;
  if (fit >= static_cast<double>(chars.size())) return EscapedXmlChars(chars, chars.size());
  if (!(fit >= 4)) return "";
  return EscapedXmlChars(chars, static_cast<size_t>(fit) - 1) + "\u2026";
}

std::string Number(double v, const char* format = "%.6g") {
  char text[48];
  std::snprintf(text, sizeof(text), format, v);
  return text;
}

// Axis labels: 0, 250, 1.5k, 2M.
std::string AxisNumber(double v) {
  if (std::fabs(v) >= 1e6) return Number(v / 1e6, "%.4g") + "M";
  if (std::fabs(v) >= 1e4) return Number(v / 1e3, "%.4g") + "k";
  return Number(v, "%.4g");
}

double NiceStep(double raw) {
  if (!(raw > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// "52750 cycles (162.31 us)", "6309950 instructions", "1234 ticks".
std::string CountText(const ProfileRow& r) {
  std::string text = r.cycles >= 0         ? Number(r.cycles, "%.0f") + " cycles"
                     : r.instructions >= 0 ? Number(r.instructions, "%.0f") + " instructions"
                                           : Number(r.ticks, "%.0f") + " ticks";
  if (r.us >= 0) text += " (" + Number(r.us, "%.2f") + " us)";
  return text;
}

struct Style {
  std::string key;  // one legend entry per key
  const char* fill;
  const char* text;  // label colour on that fill
  std::string legend;
};

bool NpuRunsOnCore(const Timeline& timeline) {
  return LaneUnits(timeline, Lane::kNpu) == std::set<std::string>{"npu-emulated-cortex-m33"};
}

Style StyleOf(const Timeline& timeline, const TimelineSlice& s) {
  const std::string& unit = s.row.ran_on;
  switch (s.kind) {
    case SliceKind::kCpuOp:
      return {"cpu_op", "#4e79a7", "#ffffff", "CPU op on the Cortex-M33"};
    case SliceKind::kDelegateCall:
      return {"delegate_call", "#cfcfcf", "#222222",
              NpuRunsOnCore(timeline)
                  ? "Cortex-M33 in an NPU delegate call, running its kernels in software"
                  : "Cortex-M33 in an NPU delegate call: starts the NPU kernels, waits for them"};
    case SliceKind::kNpuKernel:
      if (unit == "npu")
        return {"npu", "#f28e2b", "#222222", "NPU kernel (simulator timing model)"};
      if (unit == "npu-emulated-cortex-m33") {
        return {unit, "#e15759", "#ffffff",
                "NPU kernel run on the Cortex-M33 by the software NPU engine (not NPU time)"};
      }
      break;
    case SliceKind::kWeightPrefetch:
      if (unit == "dma") {
        return {unit, "#59a14f", "#ffffff",
                "weight transfer flash -> SRAM by the DMA (timing model: overlaps the kernel "
                "that reads it)"};
      }
      if (unit == "dma-emulated-cortex-m33") {
        return {unit, "#8cd17d", "#222222",
                "weight copy flash -> SRAM by the Cortex-M33 (memcpy, no DMA)"};
      }
      break;
  }
  return {std::string(SliceKindName(s.kind)) + "/" + unit, "#b07aa1", "#ffffff",
          std::string(SliceKindName(s.kind)) + " (ran on " + unit + ")"};
}

std::string Tooltip(const TimelineSlice& s) {
  const ProfileRow& r = s.row;
  std::string text = r.op + " | instruction " + std::to_string(r.instruction);
  if (!r.source_ops.empty()) {
    text += r.subgraph > 0 ? " | subgraph " + std::to_string(r.subgraph) + " ops" : " | ops";
    for (size_t i = 0; i < r.source_ops.size(); ++i) {
      text += i == 0 ? ' ' : ',';
      text += std::to_string(r.source_ops[i]);  // on its own: GCC 12 -O3 misreads "," + string
    }
  }
  text += " | " + CountText(r);
  if (r.macs >= 0) text += " | MACs " + std::to_string(r.macs);
  if (s.bytes >= 0)
    text += " | " + std::to_string(s.bytes) + " bytes into slot " + std::to_string(s.slot);
  if (!r.layer.empty()) text += " | layer " + r.layer;
  return text + " | ran on " + r.ran_on;
}

class SvgWriter {
 public:
  explicit SvgWriter(const Timeline& timeline) : t_(timeline), unit_(AxisUnit(timeline.clock)) {
    for (const TimelineSlice& s : t_.slices) span_ = std::max(span_, s.end);
    span_ = std::max(span_, t_.duration);
    if (span_ <= 0) span_ = 1;
    for (int l = 0; l < kNumLanes; ++l) {
      if (LaneShown(t_, static_cast<Lane>(l))) lanes_.push_back(static_cast<Lane>(l));
    }
  }

  std::string Draw(const std::string& source) {
    double y = kHeaderHeight;
    std::map<Lane, double> lane_y;
    for (Lane lane : lanes_) {
      lane_y[lane] = y;
      y += kLaneTitleHeight + kLaneBarHeight + kLaneGap;
    }
    const double axis_y = y;
    std::vector<Style> legend;  // in order of first appearance, lane by lane
    for (const TimelineSlice& s : t_.slices) {
      Style style = StyleOf(t_, s);
      const bool known = std::any_of(legend.begin(), legend.end(),
                                     [&](const Style& l) { return l.key == style.key; });
      if (!known) legend.push_back(std::move(style));
    }
    const double height = axis_y + kAxisHeight + kLegendRow * (legend.size() + 1) + kMargin;
    body_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Number(kWidth) +
             "\" height=\"" + Number(height) + "\" viewBox=\"0 0 " + Number(kWidth) + " " +
             Number(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    body_ += "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    Header(source);
    for (Lane lane : lanes_) LaneBackground(lane, lane_y[lane]);
    for (const TimelineSlice& s : t_.slices) Slice(s, lane_y[s.lane] + kLaneTitleHeight);
    Axis(axis_y);
    Legend(legend, axis_y + kAxisHeight);
    body_ += "</svg>\n";
    return body_;
  }

 private:
  double X(double ticks) const { return kMargin + ticks / span_ * kPlotWidth; }

  void Text(double x, double y, const std::string& escaped, const std::string& attributes = "") {
    body_ += "<text x=\"" + Number(x, "%.1f") + "\" y=\"" + Number(y, "%.1f") + "\"" +
             (attributes.empty() ? "" : " " + attributes) + ">" + escaped + "</text>\n";
  }

  void Header(const std::string& source) {
    Text(kMargin, 24, "boardlab timeline: " + XmlText(source),
         "font-size=\"16\" font-weight=\"bold\"");
    Text(kMargin, 44, "clock: " + XmlText(ClockLabel(t_.clock)), "font-size=\"12\"");
    ProfileRow total;
    total.ticks = t_.duration;
    SetCounts(t_.clock, /*delegate=*/false, total);
    Text(kMargin, 62,
         "Execute run " + std::to_string(t_.run) + " of " + std::to_string(t_.runs) +
             "; Method::execute " + XmlText(CountText(total)),
         "font-size=\"12\"");
  }

  void LaneBackground(Lane lane, double y) {
    Text(kMargin, y + 12, XmlText(LaneTitle(t_, lane)), "font-size=\"12\" font-weight=\"bold\"");
    body_ += "<rect class=\"lane\" x=\"" + Number(kMargin) + "\" y=\"" +
             Number(y + kLaneTitleHeight) + "\" width=\"" + Number(kPlotWidth) + "\" height=\"" +
             Number(kLaneBarHeight) + "\" fill=\"#f4f4f4\" stroke=\"#dddddd\"/>\n";
  }

  void Slice(const TimelineSlice& s, double y) {
    const Style style = StyleOf(t_, s);
    const double x = X(s.start);
    const double width = std::max(X(s.end) - x, kMinSliceWidth);
    body_ += "<rect class=\"slice\" data-lane=\"" + std::to_string(static_cast<int>(s.lane)) +
             "\" data-kind=\"" + SliceKindName(s.kind) + "\" x=\"" + Number(x, "%.2f") + "\" y=\"" +
             Number(y + 2) + "\" width=\"" + Number(width, "%.2f") + "\" height=\"" +
             Number(kLaneBarHeight - 4) + "\" fill=\"" + style.fill +
             "\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>" + XmlText(Tooltip(s)) +
             "</title></rect>\n";
    const std::string label = FittedLabel(s.row.op, width);
    if (!label.empty()) {
      Text(x + 3, y + kLaneBarHeight / 2 + 4, label,
           std::string("fill=\"") + style.text + "\" pointer-events=\"none\"");
    }
  }

  void Axis(double y) {
    body_ += "<line x1=\"" + Number(kMargin) + "\" y1=\"" + Number(y) + "\" x2=\"" +
             Number(kMargin + kPlotWidth) + "\" y2=\"" + Number(y) + "\" stroke=\"#444444\"/>\n";
    const double span = span_ * unit_.per_tick;
    const double step = NiceStep(span / 8);
    for (double v = 0; v <= span * (1 + 1e-9); v += step) {
      const double x = X(v / unit_.per_tick);
      body_ += "<line x1=\"" + Number(x, "%.2f") + "\" y1=\"" + Number(y) + "\" x2=\"" +
               Number(x, "%.2f") + "\" y2=\"" + Number(y + 5) + "\" stroke=\"#444444\"/>\n";
      Text(x, y + 17, AxisNumber(v), "text-anchor=\"middle\"");
    }
    std::string title = unit_.name + " from the start of Method::execute";
    if (unit_.name == "cycles" && t_.clock.ticks_per_second > 0) {
      title += " (at " + Number(t_.clock.ticks_per_second / 1e6, "%.6g") +
               " MHz, 1000 cycles = " + Number(1e9 / t_.clock.ticks_per_second, "%.3g") + " us)";
    }
    Text(kMargin + kPlotWidth / 2, y + 35, XmlText(title),
         "text-anchor=\"middle\" font-size=\"12\"");
  }

  void Legend(const std::vector<Style>& legend, double y) {
    Text(kMargin, y + 12, "legend", "font-size=\"12\" font-weight=\"bold\"");
    for (const Style& style : legend) {
      y += kLegendRow;
      body_ += "<rect class=\"legend\" x=\"" + Number(kMargin) + "\" y=\"" + Number(y + 2) +
               "\" width=\"12\" height=\"12\" fill=\"" + style.fill + "\"/>\n";
      Text(kMargin + 18, y + 12, XmlText(style.legend));
    }
  }

  const Timeline& t_;
  const TimeUnit unit_;
  double span_ = 0;
  std::vector<Lane> lanes_;
  std::string body_;
};

}  // namespace

std::string TimelineSvg(const Timeline& timeline, const std::string& source) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + SvgWriter(timeline).Draw(source);
}

}  // namespace boardlab::run
