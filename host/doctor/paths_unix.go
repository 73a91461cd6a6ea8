//go:build !windows

package doctor

import (
	"os"
	"path/filepath"
)

// pathRisks names what makes an adapter binary replaceable by others: a
// symlink (its target can change under the name) and any world-writable
// directory on the way to it (without the sticky bit for ancestors; even
// with it for the directory holding it, where anyone can add a
// binky-adapter-*).
func pathRisks(name, path string) []Finding {
	var out []Finding
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		target, _ := filepath.EvalSymlinks(path)
		out = append(out, warn("cp "+target+" "+path+".real && mv "+path+".real "+path+"  (install the binary itself, not a link)",
			"adapter %s is a symlink (%s -> %s): whoever can change the link or its target chooses what binky runs", name, path, target))
	}
	dir := filepath.Dir(path)
	for first := true; ; first = false {
		if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o002 != 0 && (first || st.Mode()&os.ModeSticky == 0) {
			out = append(out, warn("chmod o-w "+dir+"  (or move the adapter to a directory only you can write)",
				"adapter %s is reached through %s, which every user can write", name, dir))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return out
}
