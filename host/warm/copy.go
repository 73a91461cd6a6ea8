package warm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/binkyhq/binky/host/safefile"
)

// Copy modes, as Result.Mode and Progress.Mode name them.
const (
	ModeReflink  = "reflink"
	ModeByteCopy = "byte copy"
	ModeMixed    = "reflink and byte copy"
)

// ErrTracked is wrapped by the error Copy returns when a glob matches a
// path git tracks.
var ErrTracked = errors.New("path tracked by git")

// ErrEscape is wrapped by the error Copy returns when a glob would read or
// write outside the worktrees (.., an absolute path, a symlinked parent).
var ErrEscape = errors.New("path outside the worktree")

// Options tune Copy.
type Options struct {
	// Tracked returns which of paths (slash-separated, relative to dir)
	// git tracks in dir, or holds a tracked file under; nil asks git
	// (git ls-files).
	Tracked func(ctx context.Context, dir string, paths []string) ([]string, error)
	// Progress, when set, is called about every half second while a path
	// is copied, and once when it is done.
	Progress func(Progress)
	// NoClone skips copy-on-write and byte-copies (tests, benchmarks).
	NoClone bool
}

// Progress is how far the copy of one matched path is.
type Progress struct {
	Path              string // slash-separated, relative to the worktree
	Files, TotalFiles int
	Bytes, TotalBytes int64
	Mode              string // ModeReflink, ModeByteCopy or ModeMixed so far
	Done              bool
}

// Result is what Copy did.
type Result struct {
	// Copied are the matched paths copied; Kept those already present in
	// the new worktree and left alone (never overwritten).
	Copied, Kept []string
	Files        int
	Bytes        int64
	// Cloned and ByteCopied count files by how they were copied.
	Cloned, ByteCopied int
	// Skipped are the sockets, FIFOs and devices a match is or holds,
	// each "path (a FIFO)" with the path slash-separated and relative to
	// the worktree: they have no content to copy and are never opened.
	Skipped []string
}

// Mode names how the files were copied ("" when none was).
func (r *Result) Mode() string {
	switch {
	case r.Cloned > 0 && r.ByteCopied > 0:
		return ModeMixed
	case r.Cloned > 0:
		return ModeReflink
	case r.ByteCopied > 0:
		return ModeByteCopy
	}
	return ""
}

// CheckGlob reports whether g may be a [worktree] copy glob: relative,
// slash-separated, never climbing out with .., and valid doublestar
// syntax.
func CheckGlob(g string) error {
	switch {
	case strings.TrimSpace(g) == "":
		return errors.New("the glob is empty")
	case path.IsAbs(g) || filepath.IsAbs(g) || strings.Contains(g, `\`):
		return fmt.Errorf("%w: %q is not relative to the worktree (write it with / from the worktree's top)", ErrEscape, g)
	case slices.Contains(strings.Split(g, "/"), ".."):
		return fmt.Errorf("%w: %q climbs out of the worktree with \"..\"", ErrEscape, g)
	case !doublestar.ValidatePattern(g):
		return fmt.Errorf("%q is not a valid glob", g)
	}
	return nil
}

// Match lists what globs match under root: relative slash paths, sorted,
// without .git and without any path inside another match. Symlinked
// directories are not followed.
func Match(root string, globs []string) ([]string, error) {
	var all []string
	for _, g := range globs {
		if err := CheckGlob(g); err != nil {
			return nil, err
		}
		m, err := doublestar.Glob(os.DirFS(root), path.Clean(g), doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("match copy glob %q in %s: %w", g, root, err)
		}
		all = append(all, m...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	var out []string
	for _, p := range all {
		if p == "." || p == ".git" || strings.HasPrefix(p, ".git/") {
			continue
		}
		if n := len(out); n > 0 && strings.HasPrefix(p, out[n-1]+"/") {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// Copy copies what globs match in the worktree src into the worktree dst,
// each matched path whole, keeping modes, times and symlinks (never
// followed). A path dst already has is left alone. A matched path git
// tracks in src is refused before anything is copied. Each path appears
// in dst at once when done (copied beside it, then renamed), so a copy cut
// short leaves nothing half made.
func Copy(ctx context.Context, src, dst string, globs []string, opt Options) (*Result, error) {
	res := &Result{}
	if len(globs) == 0 {
		return res, nil
	}
	src, dst = filepath.Clean(src), filepath.Clean(dst)
	if src == dst {
		return res, nil
	}
	matches, err := Match(src, globs)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return res, nil
	}
	for _, m := range matches {
		if err := realParents(src, m); err != nil {
			return nil, err
		}
	}
	tracked := opt.Tracked
	if tracked == nil {
		tracked = GitTracked
	}
	t, err := tracked(ctx, src, matches)
	if err != nil {
		return nil, err
	}
	if len(t) > 0 {
		return nil, fmt.Errorf("%w: [worktree] copy matches %s, which git tracks in %s: copying it would hide the branch's own version; narrow the glob to ignored paths (git check-ignore -v <path> shows which are)", ErrTracked, strings.Join(t, ", "), src)
	}
	c := &copier{ctx: ctx, res: res, opt: opt, noClone: opt.NoClone}
	for _, m := range matches {
		to := filepath.Join(dst, filepath.FromSlash(m))
		if _, err := os.Lstat(to); err == nil {
			res.Kept = append(res.Kept, m)
			continue
		}
		if fi, err := os.Lstat(filepath.Join(src, filepath.FromSlash(m))); err == nil && special(fi.Mode()) {
			res.Skipped = append(res.Skipped, m+" ("+safefile.Kind(fi.Mode())+")")
			continue
		}
		if err := makeParents(dst, m); err != nil {
			return res, err
		}
		if err := c.copyTop(m, filepath.Join(src, filepath.FromSlash(m)), to); err != nil {
			return res, err
		}
		res.Copied = append(res.Copied, m)
	}
	return res, nil
}

// realParents refuses a match under a symlinked directory of root: its
// content would come from wherever the link points.
func realParents(root, rel string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("%w: %s", ErrEscape, rel)
	}
	parts := strings.Split(rel, "/")
	p := root
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s lies under %s, a symlink (binky never copies through one; name the link itself or its real path inside the worktree)", ErrEscape, rel, p)
		}
	}
	return nil
}

// makeParents creates the directories of rel under root, refusing any that
// exists as a symlink (it could point outside the new worktree).
func makeParents(root, rel string) error {
	parts := strings.Split(rel, "/")
	p := root
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(p, 0o755); err != nil {
				return fmt.Errorf("copy %s: %w", rel, err)
			}
		case err != nil:
			return fmt.Errorf("copy %s: %w", rel, err)
		case !fi.IsDir():
			return fmt.Errorf("%w: cannot copy %s into the new worktree: %s is a symlink or a file there", ErrEscape, rel, p)
		}
	}
	return nil
}

type entry struct {
	rel  string // relative to the matched path's top, OS separators; "" is the top
	mode fs.FileMode
	size int64
	mod  time.Time
}

type copier struct {
	ctx     context.Context
	res     *Result
	opt     Options
	noClone bool
	buf     []byte
}

// copyTop copies one matched path src to to, through a temporary sibling.
func (c *copier) copyTop(rel, src, to string) error {
	var plan []entry
	var total int64
	err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if r == "." {
			r = ""
		}
		plan = append(plan, entry{rel: r, mode: fi.Mode(), size: fi.Size(), mod: fi.ModTime()})
		if fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s to copy it: %w", src, err)
	}
	files := 0
	for _, e := range plan {
		if e.mode.IsRegular() {
			files++
		}
	}
	tmp := filepath.Join(filepath.Dir(to), ".binky-warm-"+filepath.Base(to))
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clear %s, left by an earlier copy: %w", tmp, err)
	}
	p := Progress{Path: rel, TotalFiles: files, TotalBytes: total}
	last := time.Now()
	var dirs []entry
	for _, e := range plan {
		if err := c.ctx.Err(); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("copy %s: %w", rel, err)
		}
		from, dest := filepath.Join(src, e.rel), filepath.Join(tmp, e.rel)
		var err error
		switch {
		case e.mode.IsDir():
			err = os.Mkdir(dest, 0o700)
			dirs = append(dirs, e)
		case e.mode&fs.ModeSymlink != 0:
			var target string
			if target, err = os.Readlink(from); err == nil {
				err = os.Symlink(target, dest)
			}
		case e.mode.IsRegular():
			err = c.file(from, dest, e)
			p.Files++
			p.Bytes += e.size
		default:
			// Sockets, pipes and devices are not copied (nor opened).
			c.res.Skipped = append(c.res.Skipped, path.Join(rel, filepath.ToSlash(e.rel))+" ("+safefile.Kind(e.mode)+")")
		}
		if err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("copy %s to %s: %w", from, dest, err)
		}
		if c.opt.Progress != nil && time.Since(last) > 500*time.Millisecond {
			last = time.Now()
			p.Mode = c.res.Mode()
			c.opt.Progress(p)
		}
	}
	// Directories get their mode and times last, deepest first: writing
	// into a directory changes its time, and a read-only one refuses.
	for i := len(dirs) - 1; i >= 0; i-- {
		d := filepath.Join(tmp, dirs[i].rel)
		if err := os.Chmod(d, dirs[i].mode.Perm()); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("copy %s: %w", rel, err)
		}
		_ = os.Chtimes(d, dirs[i].mod, dirs[i].mod)
	}
	if err := os.Rename(tmp, to); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("copy %s: %w", rel, err)
	}
	c.res.Files += p.Files
	c.res.Bytes += p.Bytes
	if c.opt.Progress != nil {
		p.Mode, p.Done = c.res.Mode(), true
		c.opt.Progress(p)
	}
	return nil
}

// special reports whether m is neither a directory, a regular file nor a
// symlink: a socket, FIFO or device, which Copy skips.
func special(m fs.FileMode) bool {
	return !m.IsDir() && !m.IsRegular() && m&fs.ModeSymlink == 0
}

// file copies one regular file: a copy-on-write clone while the
// filesystem makes them, else the bytes. Either opens from with
// safefile.OpenRegular: a file that is no longer regular (a FIFO put in
// its place since the walk) is refused by name, never waited on.
func (c *copier) file(from, dest string, e entry) error {
	if !c.noClone {
		err := cloneFile(from, dest, e.mode.Perm())
		if err == nil {
			c.res.Cloned++
			return os.Chtimes(dest, e.mod, e.mod)
		}
		if errors.Is(err, safefile.ErrNotRegular) {
			return err // the source, not the filesystem, refused
		}
		// The first refusal (EXDEV, EOPNOTSUPP, EINVAL…) settles it for
		// the rest: the files live on one filesystem.
		c.noClone = true
	}
	if err := c.bytes(from, dest, e.mode.Perm()); err != nil {
		return err
	}
	c.res.ByteCopied++
	return os.Chtimes(dest, e.mod, e.mod)
}

// bytes copies through a buffer (not copy_file_range, which on some
// filesystems clones: the fallback is a real copy).
func (c *copier) bytes(from, dest string, perm fs.FileMode) error {
	in, err := safefile.OpenRegular(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return err
	}
	if c.buf == nil {
		c.buf = make([]byte, 256<<10)
	}
	_, err = io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, c.buf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && perm&0o200 == 0 {
		err = os.Chmod(dest, perm)
	}
	return err
}

// GitTracked asks git which of paths it tracks in the worktree dir (a
// directory counts when a file under it is tracked).
func GitTracked(ctx context.Context, dir string, paths []string) ([]string, error) {
	var hit []string
	for chunk := range slices.Chunk(paths, 500) { // bounded command lines
		h, err := gitTracked(ctx, dir, chunk)
		if err != nil {
			return nil, err
		}
		hit = append(hit, h...)
	}
	slices.Sort(hit)
	return hit, nil
}

func gitTracked(ctx context.Context, dir string, paths []string) ([]string, error) {
	args := []string{"-C", dir, "ls-files", "-z", "--cached", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ask git which copy paths it tracks in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var hit []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		for _, p := range paths {
			if (f == p || strings.HasPrefix(f, p+"/")) && !slices.Contains(hit, p) {
				hit = append(hit, p)
			}
		}
	}
	return hit, nil
}

// gitEnv is the daemon's environment without what would point git at
// another repository or index.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_TERMINAL_PROMPT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}
