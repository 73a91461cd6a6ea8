// Package testport hands a test a loopback TCP address that refuses every
// connection and that no other socket can take while the test runs: a
// socket bound to it and never listening. A port freed by closing a
// listener is not that: the next listen on port 0 — another parallel
// test's backend, or the test's own proxy, which then proxies to itself
// without end — may be handed it. Product code never imports it.
package testport
