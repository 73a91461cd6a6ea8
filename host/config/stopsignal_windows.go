//go:build windows

package config

import "fmt"

// stopSignalNote says what a stop_signal becomes on Windows, where there
// are no signals (host/supervisor's ParseSignal): SIGTERM and SIGINT are
// CTRL_BREAK_EVENT, their Windows counterpart, and SIGKILL the job's
// termination, without a note; the others have no Windows meaning, and the
// note says binky sends CTRL_BREAK_EVENT instead.
func stopSignalNote(sig string) string {
	switch sig {
	case "SIGTERM", "SIGINT", "SIGKILL":
		return ""
	}
	return fmt.Sprintf("stop_signal %s has no meaning on Windows: binky sends CTRL_BREAK_EVENT to the service's process group instead (as for SIGTERM), and terminates its job after stop_timeout", sig)
}
