//go:build linux

package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// procStartTime is field 22 of /proc/<pid>/stat.
func procStartTime(pid int) (uint64, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, fmt.Errorf("read start time of pid %d: %w", pid, err)
	}
	return s.StartTime, nil
}

// allPids lists the numeric entries of /proc.
func allPids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// groupMembers lists the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	var pids []int
	for _, pid := range allPids() {
		if s, err := readStat(pid); err == nil && s.Pgrp == pgid && !s.dead() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// groupAlive reports whether any live process is in group pgid. kill(-pgid, 0)
// answers cheaply when the group is empty; zombies nobody reaps (an init that
// does not reap orphans) would keep it "alive", so /proc has the last word.
func groupAlive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	return len(groupMembers(pgid)) > 0
}

// markedProcesses lists the live processes whose environment carries
// MarkerEnv=value, except this process.
func markedProcesses(value string) []int {
	return markedWith([]byte(MarkerEnv + "=" + value + "\x00"))
}

// markedPrefix lists the live processes whose marker value starts with
// prefix, except this process.
func markedPrefix(prefix string) []int {
	return markedWith([]byte(MarkerEnv + "=" + prefix))
}

// markerValues maps each live process whose marker starts with prefix to
// its marker value, except this process.
func markerValues(prefix string) map[int]string {
	needle := []byte(MarkerEnv + "=" + prefix)
	out := map[int]string{}
	for _, pid := range markedWith(needle) {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(MarkerEnv+"=")); ok && bytes.HasPrefix(v, []byte(prefix)) {
				out[pid] = string(v)
			}
		}
	}
	return out
}

func markedWith(needle []byte) []int {
	self := os.Getpid()
	var pids []int
	for _, pid := range allPids() {
		if pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		if !bytes.HasPrefix(env, needle) && !bytes.Contains(env, append([]byte{0}, needle...)) {
			continue
		}
		if s, err := readStat(pid); err == nil && !s.dead() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pidWatch learns of the exit of a process that is not our child through a
// pidfd registered with the Go runtime's poller: no thread blocks and no loop
// polls. close releases the descriptor and wakes wait.
type pidWatch struct {
	f    *os.File
	once sync.Once
}

// openPidWatch opens a pidfd for pid. It must be opened before the caller
// checks the start time: from then on the pidfd names that very process even
// if the pid number is reused.
func openPidWatch(pid int) (*pidWatch, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("open pidfd for pid %d: %w", pid, err)
	}
	// Non-blocking, so that os.NewFile hands it to the runtime's poller
	// (set with fcntl rather than PIDFD_NONBLOCK, which needs Linux 5.10).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open pidfd for pid %d: %w", pid, err)
	}
	return &pidWatch{f: os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))}, nil
}

// wait blocks until the process exits (nil) or close is called (an error).
func (w *pidWatch) wait() error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		// A pidfd is readable once its process has exited.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil && !errors.Is(err, unix.EINTR) {
			perr = err
			return true
		}
		return n > 0
	})
	if err != nil {
		return err
	}
	return perr
}

func (w *pidWatch) close() {
	w.once.Do(func() { w.f.Close() })
}

// adoptionSupported reports whether Adopt can verify and watch processes here.
const adoptionSupported = true
