//go:build windows

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32   = windows.NewLazySystemDLL("kernel32.dll")
	toUnixProc = kernel32.NewProc("wine_get_unix_file_name")
	toDOSProc  = kernel32.NewProc("wine_get_dos_file_name")
	winAbsPath = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
)

// toUnix is Wine's Unix name of the Windows path p (p itself when Wine
// has none).
func toUnix(p string) string {
	if strings.EqualFold(p, "NUL") {
		return "/dev/null"
	}
	w, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return p
	}
	r, _, _ := toUnixProc.Call(uintptr(unsafe.Pointer(w)))
	if r != 0 {
		return windows.BytePtrToString(*(**byte)(unsafe.Pointer(&r))) // a pointer Wine returned
	}
	// Wine names only what exists: a path git is to make (worktree add)
	// is its parent's name and its own.
	parent, base := filepath.Split(strings.TrimRight(p, `\/`))
	if base == "" || parent == "" || len(parent) >= len(p) {
		return p
	}
	up := toUnix(parent)
	if up == parent {
		return p
	}
	return strings.TrimRight(up, "/") + "/" + base
}

// toDOS is the Windows name of the Unix path p, with / as git for Windows
// prints it.
func toDOS(p string) string {
	b, err := windows.BytePtrFromString(p)
	if err != nil {
		return p
	}
	r, _, _ := toDOSProc.Call(uintptr(unsafe.Pointer(b)))
	if r == 0 {
		return p
	}
	s := windows.UTF16PtrToString(*(**uint16)(unsafe.Pointer(&r))) // a pointer Wine returned
	s = strings.TrimPrefix(s, `\\?\`)
	return filepath.ToSlash(s)
}

func main() {
	req := request{Args: os.Args[1:]}
	wd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	req.Dir = toUnix(wd)
	// Repository discovery stops at the prefix's drive: the prefix may sit
	// inside a checkout (bin/windows/_wineprefix), which a test repository
	// that lost its .git must never reach.
	req.Ceiling = toUnix(`C:\`)
	for i, a := range req.Args {
		if winAbsPath.MatchString(a) {
			req.Args[i] = toUnix(a)
		}
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(k), "GIT_") {
			continue
		}
		if winAbsPath.MatchString(v) || strings.EqualFold(v, "NUL") {
			v = toUnix(v)
		}
		req.Env = append(req.Env, strings.ToUpper(k)+"="+v)
	}
	dir := fmt.Sprintf("/tmp/binky-gitbridge/%d-%d", os.Getpid(), time.Now().UnixNano())
	wdir := toDOS(dir)
	if err := os.MkdirAll(wdir, 0o700); err != nil {
		fail(err)
	}
	defer os.RemoveAll(wdir)
	b, _ := json.Marshal(req)
	if err := os.WriteFile(filepath.Join(wdir, "request.json"), b, 0o600); err != nil {
		fail(err)
	}
	runner := filepath.Join(filepath.Dir(os.Args[0]), "gitbridge-runner.exe")
	exe, _ := os.Executable()
	if exe != "" {
		runner = filepath.Join(filepath.Dir(exe), "gitbridge-runner.exe")
	}
	// Wine starts an ELF file as a Unix process; the handle it returns
	// cannot be waited on, so the answer is the rc file.
	var si windows.StartupInfo
	var pi windows.ProcessInformation
	line, _ := windows.UTF16PtrFromString(`"` + runner + `" ` + dir)
	if err := windows.CreateProcess(nil, line, nil, nil, false, 0, nil, nil, &si, &pi); err != nil {
		fail(fmt.Errorf("start %s: %w", runner, err))
	}
	rcFile := filepath.Join(wdir, "rc")
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if b, err := os.ReadFile(rcFile); err == nil {
			out, _ := os.ReadFile(filepath.Join(wdir, "stdout"))
			errb, _ := os.ReadFile(filepath.Join(wdir, "stderr"))
			os.Stdout.Write(dosPaths(out))
			os.Stderr.Write(errb)
			rc, _ := strconv.Atoi(string(bytes.TrimSpace(b)))
			os.RemoveAll(wdir)
			os.Exit(rc)
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("git %s: no answer from %s in 5 minutes", strings.Join(os.Args[1:], " "), runner))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dosPaths turns each Unix path git printed on a line (or a -z field) of
// its own, or after "worktree " in a porcelain listing, into its Windows
// name.
func dosPaths(out []byte) []byte {
	var b bytes.Buffer
	for len(out) > 0 {
		end := bytes.IndexAny(out, "\n\x00")
		if end < 0 {
			end = len(out)
		} else {
			end++
		}
		field, sep := out[:end], []byte{}
		if n := len(field); n > 0 && (field[n-1] == '\n' || field[n-1] == 0) {
			field, sep = field[:n-1], field[n-1:]
		}
		prefix := ""
		for _, p := range []string{"worktree ", "gitdir: "} {
			if bytes.HasPrefix(field, []byte(p+"/")) {
				prefix, field = p, field[len(p):]
			}
		}
		if bytes.HasPrefix(field, []byte("/")) {
			field = []byte(toDOS(string(field)))
		}
		b.WriteString(prefix)
		b.Write(field)
		b.Write(sep)
		out = out[end:]
	}
	return b.Bytes()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gitbridge:", err)
	os.Exit(128)
}
