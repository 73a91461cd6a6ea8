package supervisor

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"
)

// DefaultDebounce is how long the watcher waits for changes to settle: an
// editor's atomic save (write a temp file, rename it over) is one change.
const DefaultDebounce = 300 * time.Millisecond

// neverWatched are directory names whose contents never restart a service:
// git's own files and Binky's.
var neverWatched = map[string]bool{".git": true, ".binky": true}

// watcher turns file changes under root matching globs into at most one
// notification per quiet period on C.
type watcher struct {
	fs      *fsnotify.Watcher
	root    string
	globs   []string
	bases   []string        // static prefix of each glob ("." for none)
	exclude map[string]bool // absolute paths never reported (the service's logs)
	log     hclog.Logger
	C       chan string // the changed path, relative to root
	done    chan struct{}
	stopped chan struct{}
}

// startWatch watches root for changes matching globs. It watches only the
// directories a glob can reach (and the ones leading to them, to see them
// appear), adding new ones as they are created.
func startWatch(root string, globs, exclude []string, debounce time.Duration, log hclog.Logger) (*watcher, error) {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	w := &watcher{
		fs: fw, root: filepath.Clean(root), globs: globs, exclude: map[string]bool{},
		log: log, C: make(chan string, 1), done: make(chan struct{}), stopped: make(chan struct{}),
	}
	for _, g := range globs {
		base, _ := doublestar.SplitPattern(g)
		w.bases = append(w.bases, path.Clean(base))
	}
	for _, e := range exclude {
		w.exclude[filepath.Clean(e)] = true
	}
	if _, err := w.addTree(w.root); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	go w.loop(debounce)
	return w, nil
}

// close stops the watcher and waits for its goroutine.
func (w *watcher) close() {
	close(w.done)
	<-w.stopped
	w.fs.Close()
}

// rel is name relative to the root, slash-separated; ok is false outside it.
func (w *watcher) rel(name string) (string, bool) {
	r, err := filepath.Rel(w.root, name)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// wantDir says whether directory rel (slash-separated) is inside a glob's
// base or on the way to one.
func (w *watcher) wantDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if neverWatched[part] {
			return false
		}
	}
	for _, b := range w.bases {
		if b == "." || rel == "." || rel == b || strings.HasPrefix(rel, b+"/") || strings.HasPrefix(b, rel+"/") {
			return true
		}
	}
	return false
}

// matches says whether file rel matches a glob and is not excluded.
func (w *watcher) matches(abs, rel string) bool {
	if w.exclude[abs] {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if neverWatched[part] {
			return false
		}
	}
	for _, g := range w.globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// addTree watches dir and the wanted directories below it; it returns the
// first matching file found, for a directory that appeared with files in it.
func (w *watcher) addTree(dir string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished meanwhile, or unreadable: not ours to watch
		}
		rel, ok := w.rel(p)
		if !ok {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if found == "" && w.matches(p, rel) {
				found = rel
			}
			return nil
		}
		if !w.wantDir(rel) {
			return filepath.SkipDir
		}
		if err := w.fs.Add(p); err != nil {
			return fmt.Errorf("add %s: %w", p, err)
		}
		return nil
	})
	return found, err
}

func (w *watcher) loop(debounce time.Duration) {
	defer close(w.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var last string
	changed := func(rel string) {
		last = rel
		timer.Reset(debounce)
	}
	for {
		select {
		case <-w.done:
			timer.Stop()
			return
		case err, ok := <-w.fs.Errors:
			if ok {
				w.log.Warn("file watch error", "root", w.root, "error", err)
			}
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			rel, ok := w.rel(ev.Name)
			if !ok {
				continue
			}
			if ev.Op.Has(fsnotify.Create) {
				if fi, err := lstatDir(ev.Name); err == nil && fi {
					if w.wantDir(rel) {
						found, err := w.addTree(ev.Name)
						if err != nil {
							w.log.Warn("cannot watch new directory", "dir", ev.Name, "error", err)
						}
						if found != "" {
							changed(found)
						}
					}
					continue
				}
			}
			if w.matches(ev.Name, rel) {
				changed(rel)
			}
		case <-timer.C:
			select {
			case w.C <- last:
			default: // one restart is already pending
			}
		}
	}
}

// lstatDir reports whether name is a directory (not following a symlink).
func lstatDir(name string) (bool, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}
