package doctor

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// minGit is the oldest git binky's worktree handling is tested with
// (git worktree list --porcelain -z arrived in 2.36).
var minGit = [2]int{2, 36}

var gitVersionRE = regexp.MustCompile(`(\d+)\.(\d+)`)

func checkGit(ctx context.Context, e *Env) []Finding {
	out, err := exec.CommandContext(ctx, "git", "--version").Output()
	if err != nil {
		return []Finding{fail(installGit(e.GOOS), "git is not runnable: %v", err)}
	}
	v := strings.TrimSpace(string(out))
	m := gitVersionRE.FindStringSubmatch(v)
	if m == nil {
		return []Finding{warn(installGit(e.GOOS), "cannot read the version of %q: binky needs git %d.%d or newer", v, minGit[0], minGit[1])}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < minGit[0] || major == minGit[0] && minor < minGit[1] {
		return []Finding{fail(installGit(e.GOOS), "%s is older than %d.%d, which binky needs for git worktree", v, minGit[0], minGit[1])}
	}
	return []Finding{ok("%s", v)}
}

func installGit(goos string) string {
	switch goos {
	case "darwin":
		return "brew install git"
	case "windows":
		return "winget install --id Git.Git"
	}
	return "sudo apt-get install git  (or your distribution's package manager)"
}
