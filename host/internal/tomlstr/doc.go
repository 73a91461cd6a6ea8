// Package tomlstr writes TOML values for the files Binky writes for the
// user (binky.toml from init, hosts.toml): today one, a basic string.
package tomlstr
