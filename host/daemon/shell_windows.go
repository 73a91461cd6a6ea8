//go:build windows

package daemon

func shellPath() string { return "cmd" }
func shellFlag() string { return "/C" }
