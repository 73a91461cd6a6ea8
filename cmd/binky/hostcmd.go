package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// hostCmd is `binky host add|list|check|remove`: the machines of
// $BINKY_HOME/hosts.toml that --host drives (docs/remote.md).
type hostCmd struct {
	Add    hostAddCmd    `cmd:"" help:"Add a host: binky host add NAME user@machine[:port] (an ssh config alias works too)."`
	List   hostListCmd   `cmd:"" help:"List the hosts of hosts.toml."`
	Check  hostCheckCmd  `cmd:"" help:"Say, step by step, whether a host is usable: ssh connects, binky runs there, its daemon answers."`
	Remove hostRemoveCmd `cmd:"" aliases:"rm" help:"Forget a host (nothing on it is touched)."`
}

type hostAddCmd struct {
	Name      string `arg:"" help:"What --host will call it."`
	SSH       string `arg:"" name:"destination" help:"user@machine[:port], or a Host alias of your ssh config."`
	Identity  string `help:"Private key (ssh -i); default: ssh's own choice." placeholder:"FILE"`
	SSHConfig string `name:"ssh-config" help:"Another ssh config file (ssh -F)." placeholder:"FILE"`
	HostHome  string `name:"remote-home" help:"BINKY_HOME on the host (default: the host's ~/.binky)." placeholder:"DIR"`
	Binky     string `help:"binky's path on the host (default: found on the host's PATH)." placeholder:"PATH"`
	Force     bool   `help:"Replace a host of that name."`
}

func (c *hostAddCmd) Run(g *globals) error {
	f, err := remote.Load(g.home)
	if err != nil {
		return err
	}
	if _, ok := f.Hosts[c.Name]; ok && !c.Force {
		return fmt.Errorf("host %s is already in %s (--force replaces it)", c.Name, f.Path)
	}
	h := &remote.Host{Name: c.Name, SSH: c.SSH, Identity: c.Identity, SSHConfig: c.SSHConfig, Home: c.HostHome, Binky: c.Binky}
	if old := f.Hosts[c.Name]; old != nil {
		h.Repos = old.Repos
	}
	// The entry must read back as hosts.toml reads it: the same checks.
	checked, err := remote.Parse("binky host add", remote.Render(h))
	if err != nil {
		return err
	}
	f.Hosts[c.Name] = checked.Hosts[c.Name]
	if err := f.Save(); err != nil {
		return err
	}
	fmt.Printf("added host %s (%s) to %s; binky host check %s tries it\n", c.Name, c.SSH, f.Path, c.Name)
	return nil
}

type hostRemoveCmd struct {
	Name string `arg:"" help:"The host to forget."`
}

func (c *hostRemoveCmd) Run(g *globals) error {
	f, err := remote.Load(g.home)
	if err != nil {
		return err
	}
	if _, err := f.Lookup(c.Name); err != nil {
		return err
	}
	delete(f.Hosts, c.Name)
	if err := f.Save(); err != nil {
		return err
	}
	fmt.Printf("forgot host %s (its worlds keep running there: binky --host %s remove … before, to destroy them)\n", c.Name, c.Name)
	return nil
}

type hostListCmd struct {
	JSON bool `help:"Print JSON."`
}

// hostJSON is one host in `host list --json`.
type hostJSON struct {
	Name      string            `json:"name"`
	SSH       string            `json:"ssh"`
	Identity  string            `json:"identity,omitempty"`
	SSHConfig string            `json:"ssh_config,omitempty"`
	Home      string            `json:"home,omitempty"`
	Binky     string            `json:"binky,omitempty"`
	Repos     map[string]string `json:"repos,omitempty"`
}

func (c *hostListCmd) Run(g *globals) error {
	f, err := remote.Load(g.home)
	if err != nil {
		return err
	}
	if c.JSON {
		out := []hostJSON{}
		for _, n := range f.Names() {
			h := f.Hosts[n]
			out = append(out, hostJSON{Name: n, SSH: h.SSH, Identity: h.Identity, SSHConfig: h.SSHConfig, Home: h.Home, Binky: h.Binky, Repos: h.Repos})
		}
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	if len(f.Hosts) == 0 {
		fmt.Printf("no hosts in %s (binky host add NAME user@machine)\n", f.Path)
		return nil
	}
	for _, n := range f.Names() {
		h := f.Hosts[n]
		home, bin := h.Home, h.Binky
		if home == "" {
			home = "~/.binky"
		}
		if bin == "" {
			bin = "binky on PATH"
		}
		fmt.Printf("%-12s %-28s home %s, %s\n", n, h.SSH, home, bin)
		for _, p := range remoteSorted(h.Repos) {
			fmt.Printf("%-12s   repo %s: %s\n", "", p, h.Repos[p])
		}
	}
	if b, err := os.ReadFile(filepath.Join(g.home, PlacementsName)); err == nil {
		var m map[string]string
		if json.Unmarshal(b, &m) == nil && len(m) > 0 {
			fmt.Println("--host any placed:")
			for _, clone := range remoteSorted(m) {
				fmt.Printf("  %s -> %s\n", clone, m[clone])
			}
		}
	}
	return nil
}

func remoteSorted(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

type hostCheckCmd struct {
	Name string `arg:"" help:"The host to check."`
	JSON bool   `help:"Print JSON."`
}

// checkStep is one line of `host check`.
type checkStep struct {
	Step   string `json:"step"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func (c *hostCheckCmd) Run(g *globals) error {
	r, err := openRemote(g.home, c.Name)
	if err != nil {
		return err
	}
	steps := checkHost(g.ctx, r)
	ok := true
	for _, s := range steps {
		ok = ok && s.OK
	}
	if c.JSON {
		json.NewEncoder(os.Stdout).Encode(struct {
			Host  string      `json:"host"`
			OK    bool        `json:"ok"`
			Steps []checkStep `json:"steps"`
		}{c.Name, ok, steps})
	} else {
		for _, s := range steps {
			mark := "ok  "
			if !s.OK {
				mark = "FAIL"
			}
			fmt.Printf("%s %-8s %s\n", mark, s.Step, s.Detail)
			if s.Fix != "" {
				fmt.Printf("              missing: %s\n", s.Fix)
			}
		}
	}
	if !ok {
		return &exitError{Code: 1}
	}
	return nil
}

// checkHost tries the road step by step, stopping at the first step that
// fails (what follows cannot work).
func checkHost(ctx context.Context, r *remote.Remote) []checkStep {
	h := r.Host
	var steps []checkStep
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// 1. ssh connects.
	_, errOut, err := sshRun(ctx, r, "true")
	if err != nil {
		return append(steps, checkStep{Step: "ssh", Detail: fmt.Sprintf("ssh %s failed: %s", h.Destination(), firstNonEmpty(lastLineOf(errOut), err.Error())),
			Fix: "a working `ssh " + h.Destination() + "` (key, known_hosts, address); binky uses your own ssh client and config"})
	}
	steps = append(steps, checkStep{Step: "ssh", OK: true, Detail: "connects to " + h.Destination() + " (multiplexed: later calls reuse the connection)"})
	// 2. binky runs there.
	bin := r.BinkyArgv()[0]
	out, errOut, err := sshRun(ctx, r, remote.ShellJoin([]string{bin, "--version"}))
	if err != nil {
		return append(steps, checkStep{Step: "binky", Detail: fmt.Sprintf("%s --version failed on the host: %s", bin, firstNonEmpty(lastLineOf(errOut), err.Error())),
			Fix: "binky installed on the host (on the PATH of a non-interactive ssh session), or binky = \"/path/to/binky\" in hosts.toml"})
	}
	ver := strings.TrimSpace(out)
	steps = append(steps, checkStep{Step: "binky", OK: true, Detail: ver + " at " + bin})
	// 3. its daemon answers, through dial-stdio (the hello checks versions).
	var p api.PingResult
	err = remoteClient(r).Call(ctx, api.OpPing, nil, api.Handlers{}, &p)
	var inc *remote.IncompatibleError
	switch {
	case errors.As(err, &inc):
		return append(steps, checkStep{Step: "daemon", Detail: err.Error(), Fix: "the same binky release here and on " + h.Name + " (here: " + cli.Version() + ")"})
	case err != nil:
		return append(steps, checkStep{Step: "daemon", Detail: err.Error(), Fix: "a daemon that starts on the host: see its daemon.log under " + firstNonEmpty(h.Home, "~/.binky")})
	}
	steps = append(steps, checkStep{Step: "daemon", OK: true, Detail: fmt.Sprintf("answers (pid %d, home %s, %s)", p.Pid, p.Home, p.Version)})
	return steps
}

// sshRun runs a shell command line on r's host (no binky hello).
func sshRun(ctx context.Context, r *remote.Remote, line string) (stdout, stderr string, err error) {
	argv, err := r.Host.Command(r.Home)
	if err != nil {
		return "", "", err
	}
	argv = append(argv, line)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = remote.WaitDelay
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &o, &e, nil
	err = cmd.Run()
	return o.String(), e.String(), err
}

func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}
