#pragma once

// A timeline (timeline.h) as a standalone SVG picture that any browser or image viewer shows:
// a title with the clock, one horizontal lane per unit (Cortex-M33, NPU, weight DMA when the run
// has prefetches), one rectangle per slice (class "slice"; op names inside where they fit, every
// fact in its tooltip), a time axis in the profile's own unit (AxisUnit: cycles, instructions,
// microseconds or ticks) and a legend of the colours that appear. Lane backgrounds and legend
// swatches are rectangles of other classes ("lane", "legend"), so counting class="slice" counts
// slices. No scripts, no external resources; text is XML-escaped and invalid UTF-8 replaced.
//
//   std::string svg = TimelineSvg(timeline, "kws.etdp");

#include <string>

#include "runtime/cli/timeline.h"

namespace boardlab::run {

/// `source` names what was profiled (a file, a job) in the title.
std::string TimelineSvg(const Timeline& timeline, const std::string& source);

}  // namespace boardlab::run
