// Package proxybench holds the proxy benchmark: run.sh drives wrk against a
// tiny backend directly, through Binky's proxy and through Caddy's
// reverse_proxy in one run. backend/ and binkyproxy/ are its two programs.
package proxybench
