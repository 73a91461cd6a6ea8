//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The runner: os.Args[1] is the request's directory; it runs git there
// and writes stdout, stderr and, last, rc.
func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gitbridge-runner DIR (started by git.exe under Wine)")
		os.Exit(2)
	}
	dir := os.Args[1]
	rc := run(dir)
	os.WriteFile(filepath.Join(dir, "rc.tmp"), []byte(fmt.Sprint(rc)), 0o600)
	os.Rename(filepath.Join(dir, "rc.tmp"), filepath.Join(dir, "rc"))
}

func run(dir string) int {
	var req request
	b, err := os.ReadFile(filepath.Join(dir, "request.json"))
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	stderr, _ := os.Create(filepath.Join(dir, "stderr"))
	defer stderr.Close()
	if err != nil {
		fmt.Fprintln(stderr, "gitbridge-runner:", err)
		return 128
	}
	stdout, _ := os.Create(filepath.Join(dir, "stdout"))
	defer stdout.Close()
	cmd := exec.Command("/usr/bin/git", req.Args...)
	cmd.Dir = req.Dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}, req.Env...)
	// Wine names C: through the prefix's dosdevices link; git compares
	// real paths.
	if d, err := filepath.EvalSymlinks(req.Dir); err == nil {
		cmd.Dir = d
	}
	if c, err := filepath.EvalSymlinks(req.Ceiling); err == nil && req.Ceiling != "" {
		cmd.Env = append(cmd.Env, "GIT_CEILING_DIRECTORIES="+c)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(stderr, "gitbridge-runner:", err)
		return 128
	}
	return 0
}
