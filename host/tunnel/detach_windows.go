package tunnel

import "os/exec"

// setDetached is a no-op on Windows (OpenSSH for Windows has no
// multiplexing; remote hosts are driven from Unix machines).
func setDetached(*exec.Cmd) {}

// endMaster is a no-op on Windows (no multiplexing master there).
func endMaster(int) {}
