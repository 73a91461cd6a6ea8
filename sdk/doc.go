// Package sdk is the adapter contract of Binky: the request and response
// types of the five calls (describe, provision, resolve, clone, destroy), the
// error codes, the go-plugin handshake, and Run, which is the whole main of an
// adapter binary. One binary built with Run answers a one-shot call named on
// argv (one JSON object in on stdin, one out on stdout) and, when started by
// go-plugin with the magic cookie, serves the same calls over net/rpc.
//
// The host (github.com/binkyhq/binky/host/adapter) and every adapter import
// this package and nothing else of each other. It depends only on the
// standard library, hashicorp/go-plugin and hashicorp/go-hclog.
package sdk
