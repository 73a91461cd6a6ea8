//go:build windows

package winjob

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// ctrlBreakEnv marks the helper process CtrlBreak starts: "<group>:<pid>,<pid>…".
const ctrlBreakEnv = "BINKY_WINJOB_CTRL_BREAK"

var (
	procAttachConsole = kernel32.NewProc("AttachConsole")
	procFreeConsole   = kernel32.NewProc("FreeConsole")
)

// CtrlBreak sends CTRL_BREAK_EVENT to process group group, whose processes
// include pids (the leader first, when it lives). GenerateConsoleCtrlEvent
// reaches only processes on the caller's console, and every service has a
// hidden console of its own (CREATE_NO_WINDOW), so the event is sent by a
// helper: this executable again, started detached, which attaches to the
// console of the first of pids that has one, sends the event and exits
// (see init). The daemon's own console, if it has one, is never touched.
func CtrlBreak(group int, pids []int) error {
	if len(pids) == 0 {
		return fmt.Errorf("ctrl-break to group %d: no process to attach to", group)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("ctrl-break to group %d: %w", group, err)
	}
	ids := make([]string, len(pids))
	for i, p := range pids {
		ids[i] = strconv.Itoa(p)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), ctrlBreakEnv+"="+strconv.Itoa(group)+":"+strings.Join(ids, ","))
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("ctrl-break to group %d: %s", group, msg)
		}
		return fmt.Errorf("ctrl-break to group %d: helper: %w", group, err)
	}
	return nil
}

// init is the helper side of CtrlBreak: in a process started with
// ctrlBreakEnv it sends the event and exits, before main runs.
func init() {
	v, ok := os.LookupEnv(ctrlBreakEnv)
	if !ok {
		return
	}
	if err := sendCtrlBreak(v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func sendCtrlBreak(v string) error {
	g, list, _ := strings.Cut(v, ":")
	group, err := strconv.Atoi(g)
	if err != nil || group <= 0 {
		return fmt.Errorf("bad %s %q", ctrlBreakEnv, v)
	}
	procFreeConsole.Call() // started detached; be sure
	var attachErr error
	for _, s := range strings.Split(list, ",") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			continue
		}
		if r, _, e := procAttachConsole.Call(uintptr(pid)); r == 0 {
			attachErr = fmt.Errorf("attach to the console of pid %d: %w", pid, e)
			continue
		}
		if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(group)); err != nil {
			return fmt.Errorf("CTRL_BREAK_EVENT to group %d: %w", group, err)
		}
		return nil
	}
	if attachErr == nil {
		attachErr = fmt.Errorf("no pid in %q", list)
	}
	return attachErr
}
