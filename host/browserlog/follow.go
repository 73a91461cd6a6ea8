package browserlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
)

// Follow calls print for the entries Read(dir, q) returns, then for each
// entry q selects that is appended later, until ctx ends (nil) or print
// fails. It looks every poll for more, and follows the log across a roll:
// the file it reads becomes the older generation, is read to its end,
// and the new file is read from its start.
func Follow(ctx context.Context, dir string, q Query, poll time.Duration, print func(Entry) error) error {
	path := filepath.Join(dir, FileName)
	// The current file is opened first and read to its end by the same
	// handle, so that nothing appended meanwhile is printed twice or lost.
	t := &tail{path: path}
	if err := t.open(); err != nil {
		return err
	}
	defer t.close()
	older, err := readFile(path + ".1")
	if err != nil {
		return err
	}
	if t.f != nil && sameAsOlder(t.f, path+".1") {
		older = nil // rolled between the open and the read: it is t.f
	}
	cur, err := t.more()
	if err != nil {
		return err
	}
	first, _ := selectEntries(append(older, cur...), q)
	for _, e := range first {
		if err := print(e); err != nil {
			return err
		}
	}
	q.Last, q.SinceUp = 0, false
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		es, err := t.more()
		if err != nil {
			return err
		}
		if t.rolled() {
			rest, err := t.more() // the rest of the file that rolled
			if err != nil {
				return err
			}
			es = append(es, rest...)
			if t.f != nil && !sameAsOlder(t.f, path+".1") {
				// Rolled twice since the last look: the older
				// generation is a file this never read.
				mid, err := readFile(path + ".1")
				if err != nil {
					return err
				}
				es = append(es, mid...)
			}
			t.close()
			if err := t.open(); err != nil {
				return err
			}
			next, err := t.more()
			if err != nil {
				return err
			}
			es = append(es, next...)
		}
		sel, _ := selectEntries(es, q)
		for _, e := range sel {
			if err := print(e); err != nil {
				return err
			}
		}
	}
}

// tail reads one file's whole lines as they are appended.
type tail struct {
	path    string
	f       *os.File
	partial []byte
}

func (t *tail) open() error {
	f, err := shareopen.Open(t.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not yet: rolled() opens it when it comes
	}
	t.f, t.partial = f, nil
	return err
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// more reads what was appended since the last call: the entries of its
// whole lines.
func (t *tail) more() ([]Entry, error) {
	if t.f == nil {
		return nil, nil
	}
	b, err := io.ReadAll(t.f)
	if err != nil {
		return nil, err
	}
	t.partial = append(t.partial, b...)
	var out []Entry
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		var e Entry
		if json.Unmarshal(t.partial[:i], &e) == nil && e.Kind != "" {
			out = append(out, e)
		}
		t.partial = t.partial[i+1:]
	}
	return out, nil
}

// rolled reports whether the path now names another file than the one
// open (or a file, where none was).
func (t *tail) rolled() bool {
	fi, err := os.Stat(t.path)
	if err != nil {
		return false
	}
	if t.f == nil {
		return true
	}
	open, err := t.f.Stat()
	return err == nil && !os.SameFile(fi, open)
}

func sameAsOlder(f *os.File, older string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(older)
	return err == nil && os.SameFile(a, b)
}
