//go:build windows

package ctl

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/binkyhq/binky/host/internal/winjob"
	"golang.org/x/sys/windows"
)

// helperEnv makes the test binary a helper: "spawn" waits until it is in
// a job, starts a "sleep" helper as the daemon is started (startDetached) and
// prints its pid; "sleep" sleeps.
const helperEnv = "BINKY_CTL_DETACH_HELPER"

func init() {
	switch os.Getenv(helperEnv) {
	case "sleep":
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "spawn":
		for i := 0; ; i++ {
			if p, _ := winjob.CurrentParent(); p.InJob {
				break
			}
			if i > 3000 {
				fmt.Println("never put in a job")
				os.Exit(1)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		cmd, err := startDetached(cmd)
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
}

// TestDaemonBreaksAwayFromJob: a daemon started from inside a job that
// kills on close but allows breakaway (an SSH session, a CI step) is
// outside that job, and lives on when the job closes.
func TestDaemonBreaksAwayFromJob(t *testing.T) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			windows.CloseHandle(job)
		}
	}()
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=spawn")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(helper.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	err = windows.AssignProcessToJobObject(job, ph)
	windows.CloseHandle(ph)
	if err != nil {
		helper.Process.Kill()
		t.Fatalf("put the helper in the job: %v", err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	helper.Wait()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper: %q", line)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatalf("open the daemon stand-in %d: %v", pid, err)
	}
	defer windows.CloseHandle(h)
	defer windows.TerminateProcess(h, 1)
	var in int32
	procIsProcessInJob := windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")
	if r, _, err := procIsProcessInJob.Call(uintptr(h), uintptr(job), uintptr(unsafe.Pointer(&in))); r == 0 {
		t.Fatalf("IsProcessInJob: %v", err)
	}
	if in != 0 {
		t.Errorf("the daemon stand-in is in its starter's job; want it started with CREATE_BREAKAWAY_FROM_JOB")
	}
	windows.CloseHandle(job) // kill on close: ends what is still in it
	closed = true
	if ev, _ := windows.WaitForSingleObject(h, 2000); ev == windows.WAIT_OBJECT_0 {
		t.Errorf("the daemon stand-in died when its starter's job closed")
	}
}
