package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
	"github.com/fsnotify/fsnotify"
)

// ReadLogs returns the last n lines of a service log across its generations,
// oldest first; n <= 0 returns every line kept. A missing log is no lines.
func ReadLogs(path string, n int) ([]string, error) {
	return readLogs(path, n, -1)
}

// readLogs is ReadLogs with the current file read only up to curLimit bytes
// (all of it when curLimit < 0), so Follow can continue from that offset.
func readLogs(path string, n int, curLimit int64) ([]string, error) {
	return newestFirst(path, n, curLimit, func(file string, need int, limit int64) ([]string, bool, error) {
		lines, err := tailFile(file, need, limit)
		return lines, false, err
	})
}

// newestFirst reads the generations of the log at path, the current file
// first (only up to curLimit bytes of it when curLimit >= 0), until n
// entries are read (all when n <= 0) or read says the older files need
// no reading, and returns the entries oldest first. read is handed how
// many more entries are wanted (0: all) and the byte limit of the file.
func newestFirst[T any](path string, n int, curLimit int64, read func(file string, need int, limit int64) (items []T, stop bool, err error)) ([]T, error) {
	files := LogFiles(path)
	var chunks [][]T // newest file first
	got := 0
	for i := len(files) - 1; i >= 0; i-- {
		if n > 0 && got >= n {
			break
		}
		limit := int64(-1)
		if i == len(files)-1 {
			limit = curLimit
		}
		need := 0
		if n > 0 {
			need = n - got
		}
		items, stop, err := read(files[i], need, limit)
		if err != nil {
			return nil, fmt.Errorf("read log %s: %w", files[i], err)
		}
		if need > 0 && len(items) > need {
			items = items[len(items)-need:]
		}
		chunks = append(chunks, items)
		got += len(items)
		if stop {
			break
		}
	}
	out := make([]T, 0, got)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	return out, nil
}

const readChunk = 64 << 10

// tailFile returns the last n lines of one file (all when n <= 0), reading
// backwards so a large log costs what is returned. limit >= 0 reads only the
// file's first limit bytes.
func tailFile(path string, n int, limit int64) ([]string, error) {
	f, err := shareopen.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if limit >= 0 && limit < size {
		size = limit
	}
	var buf []byte
	pos := size
	for pos > 0 {
		k := min(int64(readChunk), pos)
		pos -= k
		chunk := make([]byte, k, k+int64(len(buf)))
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(chunk, buf...)
		if n > 0 && bytes.Count(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n")) >= n {
			break
		}
	}
	lines := splitLines(buf)
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// splitLines splits on '\n'; a final line without one still counts.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	parts := bytes.Split(b, []byte("\n"))
	lines := make([]string, len(parts))
	for i, p := range parts {
		lines[i] = string(bytes.TrimSuffix(p, []byte("\r")))
	}
	return lines
}

// Follow calls emit with the last n lines of a service log (n <= 0: none),
// then with each new line as it is written, following the log across rolls,
// until ctx ends (nil) or emit fails (its error). A log that does not exist
// yet is waited for.
func Follow(ctx context.Context, path string, n int, emit func(line string) error) error {
	return follow(ctx, path, func(off int64) ([]Line, error) {
		if n <= 0 {
			return nil, nil
		}
		texts, err := readLogs(path, n, off)
		lines := make([]Line, len(texts))
		for i, t := range texts {
			lines[i].Text = t
		}
		return lines, err
	}, func(l Line) error { return emit(l.Text) })
}

// FollowLines is Follow with each line's time (see Line; a new line is
// dated when it is read) and the past lines kept to those written at or
// after since when it is not zero (then n <= 0 is all of those).
func FollowLines(ctx context.Context, path string, n int, since time.Time, emit func(Line) error) error {
	return follow(ctx, path, func(off int64) ([]Line, error) {
		if n <= 0 && since.IsZero() {
			return nil, nil
		}
		return readLogLines(path, n, since, off)
	}, emit)
}

// follow emits what backlog returns of the log up to its current end
// (off), then each line written after it.
func follow(ctx context.Context, path string, backlog func(off int64) ([]Line, error), emit func(Line) error) error {
	fl := &follower{path: path, emit: func(l string) error { return emit(Line{Text: l, Time: time.Now()}) }}
	defer fl.closeFile()
	if err := fl.open(); err != nil {
		return err
	}
	lines, err := backlog(fl.off)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if err := emit(l); err != nil {
			return err
		}
	}
	// Changes to the directory wake the follower at once; the ticker is the
	// fallback for filesystems without notification.
	wake := make(<-chan fsnotify.Event)
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil && w.Add(filepath.Dir(path)) == nil {
			wake = w.Events
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := fl.poll(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-tick.C:
		}
	}
}

type follower struct {
	path    string
	emit    func(string) error
	f       *os.File
	off     int64  // bytes of f consumed
	partial []byte // a line not yet ended
}

// open opens the current log, if there is one, and starts at its end.
func (fl *follower) open() error {
	f, err := shareopen.Open(fl.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("follow log %s: %w", fl.path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("follow log %s: %w", fl.path, err)
	}
	fl.f, fl.off = f, fi.Size()
	return nil
}

func (fl *follower) closeFile() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

// poll emits what was appended; when the path now names another file (the
// log rolled), it drains the old file first and then reads the new one from
// its start.
func (fl *follower) poll() error {
	if fl.f == nil {
		f, err := shareopen.Open(fl.path, os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("follow log %s: %w", fl.path, err)
		}
		fl.f, fl.off = f, 0
	}
	if err := fl.drain(); err != nil {
		return err
	}
	cur, err := os.Stat(fl.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("follow log %s: %w", fl.path, err)
	}
	old, ferr := fl.f.Stat()
	if ferr != nil {
		return fmt.Errorf("follow log %s: %w", fl.path, ferr)
	}
	switch {
	case err != nil || !os.SameFile(cur, old): // rolled (or removed)
		if err := fl.drain(); err != nil {
			return err
		}
		if err := fl.flushPartial(); err != nil {
			return err
		}
		fl.closeFile()
		if err == nil {
			return fl.poll()
		}
	case old.Size() < fl.off: // truncated in place
		fl.off = 0
		fl.partial = nil
		return fl.drain()
	}
	return nil
}

func (fl *follower) drain() error {
	buf := make([]byte, readChunk)
	for {
		k, err := fl.f.ReadAt(buf, fl.off)
		if k > 0 {
			fl.off += int64(k)
			data := append(fl.partial, buf[:k]...)
			for {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					break
				}
				if err := fl.emit(string(bytes.TrimSuffix(data[:i], []byte("\r")))); err != nil {
					return err
				}
				data = data[i+1:]
			}
			fl.partial = append([]byte(nil), data...)
		}
		if errors.Is(err, io.EOF) || k == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("follow log %s: %w", fl.path, err)
		}
	}
}

func (fl *follower) flushPartial() error {
	if len(fl.partial) == 0 {
		return nil
	}
	line := string(fl.partial)
	fl.partial = nil
	return fl.emit(line)
}
