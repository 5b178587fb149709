#pragma once

// Names the rows of a per-op profile after the compiler's debug map (docs/artifact-format.md
// section 4), so that every boardlab-run view (a live run with --debug-map, --inspect, --board
// qemu --profile) shows the TFLite source ops the same way:
//
//   CPU row        cpu_ops[] entry of its instruction: "DEPTHWISE_CONV_2D #1", source_ops = ops,
//                  subgraph = the entry's "subgraph" (ops inside a subgraph IF or WHILE calls
//                  count from 0 in that subgraph)
//   delegate row   delegates[] entry of its instruction: "delegate 0 (BoardlabNeutronBackend)",
//                  source_ops = the union of its kernels' ops
//   NPU kernel     kernels[] entry whose id is the row's debug_id:
//                  "NPU kernel 0 (id 10) ops 0,1", layer = names[0], kernel = its index
//   CPU row and NPU kernel also take source_name = the entry's "name" ("CONV_2D #0") and macs
//   (maps from before those fields leave them unknown)
//
// Rows the map does not know keep their names.
//
//   nlohmann::json map = nlohmann::json::parse(text);
//   NameFromDebugMap(map, profile);

#include "nlohmann/json.hpp"
#include "runtime/cli/profile_table.h"

namespace boardlab::run {

/// `map` must be a JSON object (anything else names nothing).
void NameFromDebugMap(const nlohmann::json& map, Profile& profile);

}  // namespace boardlab::run
