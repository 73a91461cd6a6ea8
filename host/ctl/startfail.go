package ctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StartFailureName is the file inside BINKY_HOME where a daemon that could
// not start (a refused registry, a held lock, a socket it cannot bind)
// leaves one line, "<pid> <reason>", for the caller that started it.
const StartFailureName = "daemon.failed"

// RecordStartFailure writes err as the reason the daemon with this
// process's pid could not start. It is best effort: the reason is in
// daemon.log too.
func RecordStartFailure(home string, err error) {
	reason := strings.Join(strings.Fields(err.Error()), " ")
	line := fmt.Sprintf("%d %s\n", os.Getpid(), reason)
	_ = os.WriteFile(filepath.Join(home, StartFailureName), []byte(line), 0o600)
}

// startFailureReason is the reason the daemon with pid recorded, or "" when
// it recorded none (the file is missing or another daemon's).
func startFailureReason(home string, pid int) string {
	data, err := os.ReadFile(filepath.Join(home, StartFailureName))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	p, reason, ok := strings.Cut(line, " ")
	if !ok || p != strconv.Itoa(pid) {
		return ""
	}
	return strings.TrimSpace(reason)
}
