//go:build !windows

package daemon

func shellPath() string { return "sh" }
func shellFlag() string { return "-c" }
