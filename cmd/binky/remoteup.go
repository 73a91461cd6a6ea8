package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/binkyhq/binky/cmd/internal/cli"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// remoteUp is `binky --host NAME up [BRANCH] [--repo DIR] …`. With --repo
// the world is of the host's clone at DIR. Without it, the branch of the
// local clone the caller stands in is pushed over the same ssh road to the
// host's clone of the project (recorded in hosts.toml on first use), then
// brought up there. --host any asks each host's admission first.
func remoteUp(ctx context.Context, home, name string, args []string) int {
	repo, args := takeFlag(args, "repo")
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "binky: up:", err)
		return code
	}
	if name == remote.Any {
		picked, err := placeAny(ctx, home)
		if err != nil {
			return fail(1, err)
		}
		name = picked
	}
	r, err := openRemote(home, name)
	if err != nil {
		return fail(1, err)
	}
	if repo == "" {
		if repo, args, err = pushToHost(ctx, r, "", args); err != nil {
			return fail(1, err)
		}
	} else if !strings.HasPrefix(repo, "/") {
		return fail(2, fmt.Errorf("--repo %q: give the clone's absolute path on host %s", repo, name))
	}
	code, err := r.Exec(ctx, repo, os.Stdin, os.Stdout, os.Stderr, args...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return code
	}
	// Its names and ports answer here too (reach.go).
	reachAfter(ctx, home, name)
	return code
}

// upBranch finds up's BRANCH argument in args (the verb and its flags);
// i is its index, -1 when none is given.
func upBranch(args []string) (branch string, i int) {
	valued := map[string]bool{"--profile": true, "--only": true, "--except": true, "--home": true}
	seenUp := false
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			return "", -1
		case valued[a]:
			j++
		case strings.HasPrefix(a, "-"):
		case !seenUp && a == "up":
			seenUp = true
		case seenUp:
			return a, j
		}
	}
	return "", -1
}

var projectRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// pushToHost pushes the branch (given, else the one checked out) of the
// local clone at dir ("": where the caller stands) to host's clone of the project and returns that clone's
// path and args with the branch named. Uncommitted changes are refused:
// what is pushed is commits, and nothing is lost silently.
func pushToHost(ctx context.Context, r *remote.Remote, dir string, args []string) (string, []string, error) {
	top, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, fmt.Errorf("not in a git clone to push from (%v): give the host's clone with --repo /path/on/%s", err, r.Host.Name)
	}
	branch, _ := upBranch(args)
	if branch == "" {
		if branch, err = gitOut(ctx, top, "symbolic-ref", "--short", "HEAD"); err != nil {
			return "", nil, errors.New("HEAD is detached here: name the branch to push (binky --host " + r.Host.Name + " up BRANCH)")
		}
		args = append(args[:1:1], append([]string{branch}, args[1:]...)...)
	}
	// A branch that does not exist here starts at HEAD, as binky up makes
	// a new branch from where you stand.
	src := "refs/heads/" + branch
	if _, err := gitOut(ctx, top, "rev-parse", "--verify", "--quiet", src); err != nil {
		src = "HEAD"
	}
	if dirty, _ := gitOut(ctx, top, "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		return "", nil, fmt.Errorf("%s has uncommitted changes; commit (or stash) them first: only commits are pushed to host %s, and binky will not leave your changes behind silently", top, r.Host.Name)
	}
	project := projectName(top)
	f, err := remote.Load(r.Home)
	if err != nil {
		return "", nil, err
	}
	h := f.Hosts[r.Host.Name]
	dest := h.Repos[project]
	if dest == "" && h.Home != "" {
		dest = path.Join(h.Home, "repos", project)
	}
	if dest == "" {
		remoteHome, _, err := sshRun(ctx, r, `printf %s "$HOME"`)
		if err != nil || !strings.HasPrefix(remoteHome, "/") {
			return "", nil, fmt.Errorf("ask host %s for its home directory: %v", r.Host.Name, err)
		}
		dest = path.Join(remoteHome, "binky-repos", project)
	}
	// The host's clone: made on first use, taking pushes to its checked-out
	// branch by updating the files (receive.denyCurrentBranch updateInstead).
	q := remote.ShellJoin([]string{dest})
	if _, e, err := sshRun(ctx, r, "test -d "+q+"/.git || { git init -q "+q+" && git -C "+q+" config receive.denyCurrentBranch updateInstead; }"); err != nil {
		return "", nil, fmt.Errorf("make the clone %s on host %s: %s", dest, r.Host.Name, firstNonEmpty(lastLineOf(e), err.Error()))
	}
	url := "ssh://" + sshURLHost(r.Host) + dest
	if src == "HEAD" {
		fmt.Fprintf(os.Stderr, "pushing HEAD as the new branch %s to %s:%s\n", branch, r.Host.Name, dest)
	} else {
		fmt.Fprintf(os.Stderr, "pushing %s to %s:%s\n", branch, r.Host.Name, dest)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", top, "push", "--quiet", url, src+":refs/heads/"+branch)
	cmd.Env = append(os.Environ(), "GIT_SSH_COMMAND="+r.Host.SSHCommand(r.Home))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("git push of %s to host %s failed (%v; git's message above)", branch, r.Host.Name, err)
	}
	// A clone made just now has no checkout yet: the pushed branch is it.
	if _, e, err := sshRun(ctx, r, "git -C "+q+" rev-parse -q --verify HEAD >/dev/null || git -C "+q+" checkout -q "+remote.ShellJoin([]string{branch})); err != nil {
		return "", nil, fmt.Errorf("check out %s in %s on host %s: %s", branch, dest, r.Host.Name, firstNonEmpty(lastLineOf(e), err.Error()))
	}
	if h.Repos[project] != dest {
		if h.Repos == nil {
			h.Repos = map[string]string{}
		}
		h.Repos[project] = dest
		if err := f.Save(); err != nil {
			return "", nil, err
		}
		fmt.Fprintf(os.Stderr, "recorded %s's clone on %s in %s: repos.%s = %s\n", project, r.Host.Name, f.Path, project, dest)
	}
	return dest, args, nil
}

// sshURLHost is the user@host part of an ssh:// URL (the port is ssh's -p).
func sshURLHost(h *remote.Host) string {
	addr := h.Addr
	if strings.Contains(addr, ":") {
		addr = "[" + addr + "]"
	}
	if h.User != "" {
		return h.User + "@" + addr
	}
	return addr
}

// projectName is binky.toml's [project] name in dir, else dir's name.
func projectName(dir string) string {
	var doc struct {
		Project struct {
			Name string `toml:"name"`
		} `toml:"project"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "binky.toml")); err == nil && len(b) < 1<<20 {
		if _, err := toml.Decode(string(b), &doc); err == nil && projectRE.MatchString(doc.Project.Name) {
			return doc.Project.Name
		}
	}
	n := strings.ToLower(filepath.Base(dir))
	n = regexp.MustCompile(`[^a-z0-9-]+`).ReplaceAllString(n, "-")
	n = strings.Trim(n, "-")
	if n == "" {
		n = "repo"
	}
	return n
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(e.String()); s != "" {
			return "", errors.New(s)
		}
		return "", err
	}
	return strings.TrimSpace(o.String()), nil
}

// placeAny asks each host of hosts.toml, in name order, for its admission
// (free RAM and disk against its reserves, max_parallel, its queue) and
// returns the first that admits, recording the choice in the local home
// (placements.json) and saying it.
func placeAny(ctx context.Context, home string) (string, error) {
	f, err := remote.Load(home)
	if err != nil {
		return "", err
	}
	if len(f.Hosts) == 0 {
		return "", fmt.Errorf("--host any: no hosts in %s (binky host add NAME user@machine)", f.Path)
	}
	var why []string
	for _, n := range f.Names() {
		r := &remote.Remote{Host: f.Hosts[n], Home: home, Wire: api.WireVersion, Version: versionLine()}
		var res api.ReserveResult
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := remoteClient(r).Call(cctx, api.OpReserve, api.ReserveArgs{}, api.Handlers{}, &res)
		cancel()
		if err != nil {
			why = append(why, n+": "+err.Error())
			continue
		}
		if reason := refuses(res.Pressure); reason != "" {
			why = append(why, n+": "+reason)
			fmt.Fprintf(os.Stderr, "host %s does not admit: %s\n", n, reason)
			continue
		}
		fmt.Fprintf(os.Stderr, "placing on host %s (the first that admits)\n", n)
		recordPlacement(home, n)
		return n, nil
	}
	return "", fmt.Errorf("--host any: no host admits the world now:\n  %s", strings.Join(why, "\n  "))
}

// refuses says why a host's pressure admits no new world, or "".
func refuses(p api.Pressure) string {
	switch {
	case p.MaxParallel > 0 && p.Running >= p.MaxParallel:
		return fmt.Sprintf("%d worlds run, max_parallel is %d", p.Running, p.MaxParallel)
	case p.Queued > 0:
		return fmt.Sprintf("%d worlds already wait in its queue", p.Queued)
	case p.RAMFreePct >= 0 && p.RAMReserve > 0 && p.RAMFreePct < p.RAMReserve:
		return fmt.Sprintf("%.0f%% RAM free, below its reserve of %.0f%%", p.RAMFreePct, p.RAMReserve)
	case p.DiskFreeGB >= 0 && p.DiskHeadroom > 0 && p.DiskFreeGB < p.DiskHeadroom:
		return fmt.Sprintf("%.1f GB disk free, below its headroom of %.1f GB", p.DiskFreeGB, p.DiskHeadroom)
	}
	return ""
}

// PlacementsName is the local home's record of where --host any put
// worlds: the last choice per working directory's clone.
const PlacementsName = "placements.json"

func recordPlacement(home, host string) {
	p := filepath.Join(home, PlacementsName)
	m := map[string]string{}
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &m)
	}
	key, _ := os.Getwd()
	if top, err := gitOut(context.Background(), "", "rev-parse", "--show-toplevel"); err == nil {
		key = top
	}
	m[key] = host
	if b, err := json.MarshalIndent(m, "", "  "); err == nil {
		os.MkdirAll(home, 0o700)
		os.WriteFile(p, append(b, '\n'), 0o600)
	}
}

func versionLine() string { return cli.Version() }
