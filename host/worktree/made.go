package worktree

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// madeMarker is the file, in a linked worktree's own git directory
// (<common>/worktrees/<id>), that says binky made the worktree. It lives
// and dies with the worktree: git removes the directory with it, and no
// tool that made a worktree of its own (Claude Code, worktrunk, a plain
// git worktree add) ever writes it.
const madeMarker = "binky-made"

// adminDir is a linked worktree's own git directory, read from the
// "gitdir: …" line of its .git file; "" for a main worktree (whose .git
// is a directory) or anything unreadable.
func adminDir(path string) string {
	f, err := os.Open(filepath.Join(path, ".git"))
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(path, dir)
	}
	return filepath.Clean(dir)
}

// MarkMade records that binky made the linked worktree at path, so that
// remove takes the worktree away with its world. A main worktree is never
// marked.
func MarkMade(path string) error {
	dir := adminDir(path)
	if dir == "" {
		return fmt.Errorf("mark the worktree at %s as binky's: it is not a linked worktree", path)
	}
	if err := os.WriteFile(filepath.Join(dir, madeMarker), []byte("binky\n"), 0o644); err != nil {
		return fmt.Errorf("mark the worktree at %s as binky's: %w", path, err)
	}
	return nil
}

// Made reports whether binky marked the worktree at path (MarkMade) and
// whether a marker could be looked for at all (known is false for a path
// that is not a linked worktree any more).
func Made(path string) (made, known bool) {
	dir := adminDir(path)
	if dir == "" {
		return false, false
	}
	_, err := os.Lstat(filepath.Join(dir, madeMarker))
	return err == nil, true
}
