// Package proxybench holds the proxy benchmark: run.sh drives wrk against a
// tiny backend directly, through Binky's proxy alone (binkyproxy), through a
// real daemon serving a `binky up` world, through Caddy's reverse_proxy and
// through vercel-labs/portless in one run, on kept-alive connections and
// with a new connection per request. rss.sh measures the daemon's memory
// with 2 and 50 worlds.
// backend/ and binkyproxy/ are its two programs.
package proxybench
