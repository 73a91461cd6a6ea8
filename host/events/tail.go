package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

const (
	tailChunk = 64 << 10
	// maxLine bounds one line read back; a longer one is not an event
	// Emit could have written and is skipped.
	maxLine = 1 << 20
)

// Tail returns the newest n events of the log at path, oldest first. Lines
// that are not events (a torn last line, garbage) are skipped. A log that
// does not exist yet has no events.
func Tail(path string, n int) ([]Event, error) {
	return TailFunc(path, n, nil)
}

// TailFunc is Tail keeping only the events for which keep returns true (all
// when keep is nil): the newest n of those, oldest first.
func TailFunc(path string, n int, keep func(Event) bool) ([]Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	evs, err := tail(f, st.Size(), n, keep, tailChunk)
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	return evs, nil
}

// ForWorktree keeps the events of one worktree. An empty project matches the
// worktree name in any project.
func ForWorktree(project, worktree string) func(Event) bool {
	return func(e Event) bool {
		return e.Worktree == worktree && (project == "" || e.Project == project)
	}
}

// tail reads r backwards from size in chunks, newest line first, until n
// events are kept or the start is reached.
func tail(r io.ReaderAt, size int64, n int, keep func(Event) bool, chunk int) ([]Event, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []Event
	var carry []byte // the start of a line whose beginning is not read yet
	buf := make([]byte, chunk)
	take := func(line []byte) bool {
		if len(line) == 0 {
			return false
		}
		e, err := ParseLine(line)
		if err != nil || (keep != nil && !keep(e)) {
			return false
		}
		out = append(out, e)
		return len(out) == n
	}
	for pos := size; pos > 0; {
		c := int64(chunk)
		if pos < c {
			c = pos
		}
		pos -= c
		if _, err := r.ReadAt(buf[:c], pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		data := append(slices.Clone(buf[:c]), carry...)
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			if take(data[i+1:]) {
				slices.Reverse(out)
				return out, nil
			}
			data = data[:i]
		}
		carry = data
		if len(carry) > maxLine {
			carry = nil // not a line Emit wrote; its head is skipped too
		}
	}
	if take(carry) {
		slices.Reverse(out)
		return out, nil
	}
	slices.Reverse(out)
	return out, nil
}
