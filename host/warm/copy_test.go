package warm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// noneTracked stands in for git where a test is not about tracking.
func noneTracked(context.Context, string, []string) ([]string, error) { return nil, nil }

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// empty reports whether dir holds nothing.
func empty(t *testing.T, dir string) bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) == 0
}

// TestCopyRefusesTracked: a glob that matches a file git tracks (or a
// directory holding one) is refused before anything is copied, since the
// copy would hide the branch's own version; ignored paths pass.
func TestCopyRefusesTracked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src, dst := t.TempDir(), t.TempDir()
	git(t, src, "init", "-q")
	write(t, src, ".gitignore", "node_modules/\n.env.local\n")
	write(t, src, "config/app.json", "{}")
	write(t, src, "node_modules/a/index.js", "a")
	write(t, src, ".env.local", "X=1")
	git(t, src, "add", ".gitignore", "config/app.json")
	git(t, src, "commit", "-q", "-m", "init")

	for _, globs := range [][]string{{"node_modules", "config"}, {"config/*.json"}, {".gitignore"}} {
		_, err := Copy(context.Background(), src, dst, globs, Options{})
		if !errors.Is(err, ErrTracked) {
			t.Fatalf("Copy %v: got %v; want ErrTracked", globs, err)
		}
		if !empty(t, dst) {
			t.Fatalf("Copy %v refused but copied something into %s", globs, dst)
		}
	}
	res, err := Copy(context.Background(), src, dst, []string{"node_modules", ".env.local"}, Options{})
	if err != nil {
		t.Fatalf("Copy of ignored paths: %v", err)
	}
	if got := strings.Join(res.Copied, ","); got != ".env.local,node_modules" {
		t.Fatalf("copied %q; want .env.local,node_modules", got)
	}
}

// TestCopyKeepsSymlinks: symlinks are copied as symlinks with the same
// target, relative or absolute, never followed.
func TestCopyKeepsSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	src, dst, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, src, "node_modules/pkg/tool.js", "tool")
	write(t, outside, "big", strings.Repeat("x", 1000))
	links := map[string]string{
		"node_modules/.bin/tool": "../pkg/tool.js",
		"node_modules/abs":       filepath.Join(outside, "big"),
		"node_modules/dirlink":   outside,
		"node_modules/dangling":  "does/not/exist",
	}
	for rel, target := range links {
		p := filepath.Join(src, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Copy(context.Background(), src, dst, []string{"node_modules"}, Options{Tracked: noneTracked}); err != nil {
		t.Fatal(err)
	}
	for rel, target := range links {
		p := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is %v in the copy; want a symlink", rel, fi.Mode())
			continue
		}
		if got, _ := os.Readlink(p); got != target {
			t.Errorf("%s points to %q; want %q", rel, got, target)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dst, "node_modules/pkg/tool.js")); err != nil || string(b) != "tool" {
		t.Errorf("tool.js = %q, %v; want \"tool\"", b, err)
	}
}

// TestCopyRefusesEscape: nothing is read from outside the source worktree
// nor written outside the new one: .. and absolute globs, a path under a
// symlinked directory of the source, a symlinked parent in the new worktree.
func TestCopyRefusesEscape(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := t.TempDir()
	write(t, outside, "secret.txt", "secret")
	write(t, outside, "node_modules/x", "x")
	for _, tc := range []struct {
		name  string
		globs []string
		src   func(src string)
		dst   func(dst string)
	}{
		{name: "dotdot", globs: []string{"../" + filepath.Base(outside) + "/secret.txt"}},
		{name: "dotdot inside", globs: []string{"a/../../secret.txt"}},
		{name: "absolute", globs: []string{filepath.Join(outside, "secret.txt")}},
		{name: "symlinked source parent", globs: []string{"cache/secret.txt"}, src: func(src string) {
			os.Symlink(outside, filepath.Join(src, "cache"))
		}},
		{name: "symlinked target parent", globs: []string{"packages/a/node_modules"}, src: func(src string) {
			write(t, src, "packages/a/node_modules/y", "y")
		}, dst: func(dst string) {
			os.Symlink(outside, filepath.Join(dst, "packages"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := t.TempDir(), t.TempDir()
			if tc.src != nil {
				tc.src(src)
			}
			if tc.dst != nil {
				tc.dst(dst)
			}
			_, err := Copy(context.Background(), src, dst, tc.globs, Options{Tracked: noneTracked})
			if !errors.Is(err, ErrEscape) {
				t.Fatalf("Copy %v: got %v; want ErrEscape", tc.globs, err)
			}
			if _, err := os.Lstat(filepath.Join(outside, "a")); err == nil {
				t.Fatalf("Copy %v wrote outside the new worktree", tc.globs)
			}
			filepath.WalkDir(dst, func(p string, de fs.DirEntry, err error) error {
				if err == nil && de.Type().IsRegular() {
					t.Errorf("Copy %v left %s in the new worktree", tc.globs, p)
				}
				return nil
			})
		})
	}
	// A symlinked directory matched by ** is copied as the link, its
	// target's files never read.
	src, dst := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(src, "cache"))
	if _, err := Copy(context.Background(), src, dst, []string{"cache/**"}, Options{Tracked: noneTracked}); err != nil && !errors.Is(err, ErrEscape) {
		t.Fatalf("Copy cache/**: %v", err)
	}
	filepath.WalkDir(dst, func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			t.Errorf("Copy cache/** read through a symlink: %s", p)
		}
		return nil
	})
}

// TestCopyKeepsExisting: a path the new worktree already has is left
// alone, never overwritten.
func TestCopyKeepsExisting(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write(t, src, ".env.local", "FROM=main")
	write(t, src, "node_modules/a", "a")
	write(t, dst, ".env.local", "FROM=branch")
	res, err := Copy(context.Background(), src, dst, []string{".env.local", "node_modules"}, Options{Tracked: noneTracked})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, ".env.local")); string(b) != "FROM=branch" {
		t.Errorf(".env.local = %q; want the branch's own FROM=branch", b)
	}
	if strings.Join(res.Kept, ",") != ".env.local" || strings.Join(res.Copied, ",") != "node_modules" {
		t.Errorf("kept %v, copied %v; want [.env.local], [node_modules]", res.Kept, res.Copied)
	}
}

// tree writes n files of varied size, mode and time under root/rel.
func tree(t *testing.T, root, rel string, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(root, rel, fmt.Sprintf("pkg%03d", i%100), fmt.Sprintf("f%05d.js", i))
		if i%100 == 0 || i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		content := bytes.Repeat([]byte{byte('a' + i%26)}, 4096+(i%7)*1000)
		mode := fs.FileMode(0o644)
		if i%10 == 0 {
			mode = 0o755
		}
		if err := os.WriteFile(p, content, mode); err != nil {
			t.Fatal(err)
		}
		mt := time.Date(2024, 1, 1, 0, 0, i%60, 0, time.UTC)
		os.Chtimes(p, mt, mt)
	}
}

// sameTree fails unless every regular file of a/rel is in b/rel with the
// same content, mode and modification time.
func sameTree(t *testing.T, a, b, rel string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(a, rel), func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		r, _ := filepath.Rel(a, p)
		q := filepath.Join(b, r)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(q)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the original", r)
		}
		fa, _ := os.Stat(p)
		fb, _ := os.Stat(q)
		if fa.Mode() != fb.Mode() || !fa.ModTime().Equal(fb.ModTime()) {
			t.Errorf("%s: mode %v time %v; want %v %v", r, fb.Mode(), fb.ModTime(), fa.Mode(), fa.ModTime())
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestByteCopyFallback: where the filesystem cannot clone (tmpfs), and when
// cloning is turned off, the byte copy gives the same content, modes and
// times, and says so.
func TestByteCopyFallback(t *testing.T) {
	dirs := map[string]string{"forced": ""}
	if runtime.GOOS == "linux" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			dirs["tmpfs"] = "/dev/shm"
		}
	}
	for name, base := range dirs {
		t.Run(name, func(t *testing.T) {
			var src, dst string
			if base == "" {
				src, dst = t.TempDir(), t.TempDir()
			} else {
				d, err := os.MkdirTemp(base, "binky-warm-")
				if err != nil {
					t.Skipf("no tmpfs to test on: %v", err)
				}
				t.Cleanup(func() { os.RemoveAll(d) })
				src, dst = filepath.Join(d, "src"), filepath.Join(d, "dst")
				os.Mkdir(src, 0o755)
				os.Mkdir(dst, 0o755)
			}
			tree(t, src, "node_modules", 300)
			var last Progress
			res, err := Copy(context.Background(), src, dst, []string{"node_modules"}, Options{
				Tracked: noneTracked, NoClone: base == "", Progress: func(p Progress) { last = p },
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := sameTree(t, src, dst, "node_modules"); n != 300 {
				t.Fatalf("compared %d files; want 300", n)
			}
			if res.Cloned != 0 || res.ByteCopied != 300 || res.Mode() != ModeByteCopy {
				t.Errorf("cloned %d, byte-copied %d, mode %q; want 0, 300, %q", res.Cloned, res.ByteCopied, res.Mode(), ModeByteCopy)
			}
			if !last.Done || last.Files != 300 || last.Bytes != last.TotalBytes || last.Mode != ModeByteCopy {
				t.Errorf("last progress %+v; want done, 300 files, all bytes, byte copy", last)
			}
			if m, _ := filepath.Glob(filepath.Join(dst, ".binky-warm-*")); len(m) > 0 {
				t.Errorf("temporary copy left behind: %v", m)
			}
		})
	}
}

// TestCopyCancelled: a copy cut short leaves nothing half made in the new
// worktree.
func TestCopyCancelled(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src, "node_modules", 50)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Copy(ctx, src, dst, []string{"node_modules"}, Options{Tracked: noneTracked}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v; want context.Canceled", err)
	}
	if !empty(t, dst) {
		t.Fatal("a cancelled copy left files in the new worktree")
	}
}
