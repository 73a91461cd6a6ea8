//go:build unix && !linux

package supervisor

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

var errNoProc = fmt.Errorf("process start times and pidfd are linux only (this is %s): %w", runtime.GOOS, errors.ErrUnsupported)

func readStat(int) (procStat, error) { return procStat{}, errNoProc }

func procStartTime(int) (uint64, error) { return 0, errNoProc }

func groupAlive(pgid int) bool { return !errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) }

func groupMembers(int) []int { return nil }

func markedProcesses(string) []int { return nil }

func markedPrefix(string) []int { return nil }

func markerValues(string) map[int]string { return nil }

type pidWatch struct{}

func openPidWatch(int) (*pidWatch, error) { return nil, errNoProc }

func (*pidWatch) wait() error { return errNoProc }

func (*pidWatch) close() {}

const adoptionSupported = false
