// Package proxybench holds the proxy benchmark: run.sh drives wrk against a
// tiny backend directly, through Binky's proxy alone (binkyproxy), through a
// real daemon serving a `binky up` world, and through Caddy's reverse_proxy
// in one run. rss.sh measures the daemon's memory with 2 and 50 worlds.
// backend/ and binkyproxy/ are its two programs.
package proxybench
