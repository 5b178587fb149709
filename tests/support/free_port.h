#pragma once

// A TCP port on 127.0.0.1 that nothing listens on right now, for tests that start servers (a
// QEMU board, a proxy). The kernel picks it; it stays free unless another process takes it before
// the test binds it, which the ephemeral range makes unlikely.

namespace boardlab::testing {

int FreeLoopbackPort();

}  // namespace boardlab::testing
