//go:build linux

package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroups tracks each world's processes in a cgroup v2 of its own,
// <cgroup2 mount>/binky/<name>/<project>/<worktree>. A service is started
// inside its world's cgroup (clone into cgroup, so not even its first fork
// escapes), and everything it ever starts stays there whatever it does to
// its session, group or environment; ending a world ends the cgroup's
// processes. It needs a writable cgroup v2 hierarchy (root, or a delegated
// subtree); where there is none, OpenCgroups fails and the supervisor
// falls back to process groups and the BINKY_SERVICE marker.
type Cgroups struct {
	root string
}

// OpenCgroups finds the cgroup v2 mount and makes binky/<name> under it.
func OpenCgroups(name string) (*Cgroups, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(mnt, "binky", name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup v2 at %s is not writable here (%v); falling back to process groups", mnt, err)
	}
	if err := unix.Access(filepath.Join(root, "cgroup.procs"), unix.W_OK); err != nil {
		return nil, fmt.Errorf("cgroup %s: cgroup.procs is not writable (%v); falling back to process groups", root, err)
	}
	return &Cgroups{root: root}, nil
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (unified or
// hybrid layout), from /proc/self/mountinfo.
func cgroup2Mount() (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// id parent major:minor root mountpoint options … - fstype source …
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		if f := strings.Fields(post); len(f) > 0 && f[0] == "cgroup2" {
			if g := strings.Fields(pre); len(g) >= 5 {
				return g[4], nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted; falling back to process groups")
}

// Root is the directory of this daemon's cgroups.
func (c *Cgroups) Root() string { return c.root }

// dir is the cgroup of one world.
func (c *Cgroups) dir(project, worktree string) string {
	return filepath.Join(c.root, project, worktree)
}

// open makes the world's cgroup and opens it for clone-into-cgroup.
func (c *Cgroups) open(project, worktree string) (*os.File, error) {
	d := c.dir(project, worktree)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("make cgroup %s: %w", d, err)
	}
	return os.Open(d)
}

// Procs lists the live processes in the world's cgroup.
func (c *Cgroups) Procs(project, worktree string) []int {
	if c == nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir(project, worktree), "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			if st, err := readStat(pid); err == nil && !st.dead() {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// End ends every process in the world's cgroup: SIGTERM, then after grace
// the cgroup is killed (cgroup.kill, or SIGKILL to each process where the
// kernel has no cgroup.kill). It returns the pids still alive after that.
func (c *Cgroups) End(project, worktree string, grace time.Duration) []int {
	if c == nil || len(c.Procs(project, worktree)) == 0 {
		return nil
	}
	for _, p := range c.Procs(project, worktree) {
		_ = signalPid(p, syscall.SIGTERM)
	}
	if c.waitEmpty(project, worktree, grace) {
		return nil
	}
	if err := os.WriteFile(filepath.Join(c.dir(project, worktree), "cgroup.kill"), []byte("1"), 0); err != nil {
		for _, p := range c.Procs(project, worktree) {
			_ = signalPid(p, killSignal)
		}
	}
	c.waitEmpty(project, worktree, killWait)
	return c.Procs(project, worktree)
}

func (c *Cgroups) waitEmpty(project, worktree string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := 5 * time.Millisecond
	for len(c.Procs(project, worktree)) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
		step = min(step*2, 100*time.Millisecond)
	}
	return true
}

// Remove deletes the world's cgroup once it is empty (a world removed).
func (c *Cgroups) Remove(project, worktree string) {
	if c == nil {
		return
	}
	_ = os.Remove(c.dir(project, worktree))
	_ = os.Remove(filepath.Join(c.root, project)) // only when it is empty
}

// Prune deletes every cgroup under the home's root that is empty, then the
// root itself when nothing is left in it: at daemon exit, so that a home
// whose worlds are down or gone leaves no directory behind in the cgroup
// tree. A cgroup that still holds processes (a world that runs on for the
// next daemon to adopt) cannot be deleted, and stays; the next daemon
// makes again what it needs.
func (c *Cgroups) Prune() {
	if c == nil {
		return
	}
	projects, _ := os.ReadDir(c.root)
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		worlds, _ := os.ReadDir(filepath.Join(c.root, p.Name()))
		for _, w := range worlds {
			if w.IsDir() {
				_ = os.Remove(filepath.Join(c.root, p.Name(), w.Name()))
			}
		}
		_ = os.Remove(filepath.Join(c.root, p.Name()))
	}
	_ = os.Remove(c.root)
}

// intoCgroup starts cmd inside the world's cgroup. The returned func closes
// what it opened once cmd has started.
func (c *Cgroups) intoCgroup(attr *syscall.SysProcAttr, key Key) (func(), error) {
	if c == nil {
		return func() {}, nil
	}
	f, err := c.open(key.Project, key.Worktree)
	if err != nil {
		return func() {}, err
	}
	attr.UseCgroupFD = true
	attr.CgroupFD = int(f.Fd())
	return func() { f.Close() }, nil
}

func usedCgroup(attr *syscall.SysProcAttr) bool { return attr.UseCgroupFD }
