//go:build !windows

package config

// stopSignalNote: every stop_signal config accepts is a signal here.
func stopSignalNote(string) string { return "" }
