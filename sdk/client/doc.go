// Package client is the one implementation of "call an adapter binary". It
// runs a binky-adapter-* executable in either tier of the adapter protocol:
//
//   - one-shot: `<binary> <call>` with the request as one JSON object on
//     stdin, in its own process group (on Windows, a Job Object of its own
//     that kills on close), with a deadline from the context; the
//     reply must be exactly one JSON object (at most sdk.MaxMessage bytes) on
//     stdout. On a timeout, and after every call, the whole group is killed
//     and the adapter reaped.
//   - RPC: the same binary started by go-plugin (sdk.Handshake, net/rpc) and
//     kept alive as a Session for a batch of calls, its socket in a
//     directory of the Session's own that is removed when it ends. The
//     connection is mutual TLS (go-plugin's AutoMTLS) on every platform;
//     on Windows, where go-plugin listens on loopback TCP, the adapter
//     takes a port in RPCMinPort–RPCMaxPort, outside binky's default
//     world range. On Windows the RPC adapter, too, runs in a kill-on-close
//     job (go-plugin starts it through a RunnerFunc that puts it there
//     before its first instruction), so what it starts ends with the
//     session, and it ends with the host.
//
// Both tiers carry byte-identical JSON requests and replies, validated by the
// same rules. Errors name the binary, the call and, for a malformed reply,
// the first 200 bytes seen. The adapter's stderr is captured (bounded) and
// handed to a callback so the caller can redact and log it; it never appears
// in an error. Discovery and policy (which binary, which tier, which
// deadline) live in the host, not here.
package client
