package supervisor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
	"github.com/hashicorp/go-hclog"
)

// A service writes its log itself, through the descriptor it was started
// with (O_APPEND, no pipe through the daemon), so it never blocks on the
// daemon and keeps writing while none runs. While the daemon runs, its log
// keeper looks at each running service's log every LogCheckEvery:
//
//   - it appends a time mark (offset and time) to the log's index
//     (<log>.idx) when the log grew, which dates every line to within
//     LogCheckEvery (ReadLogLines, `binky logs --since/--timestamps`);
//   - a log past LogRollSize is rolled in place (copy, then truncate, as
//     logrotate's copytruncate): the process keeps its descriptor, and
//     with O_APPEND its next write lands at the start of the emptied file.
//
// The loss window: what the service writes between the copy's last read
// and the truncate (microseconds; the copy is repeated until it catches
// up, so only a write racing the truncate itself is lost). While no
// daemon runs nothing is rolled or dated: the log grows, and lines
// written then carry the time of the next mark (or the file's mtime).

// LogOptions tune the log keeper; zero fields take the defaults.
type LogOptions struct {
	RollSize   int64         // LogRollSize if 0
	CheckEvery time.Duration // LogCheckEvery if 0
}

// LogCheckEvery is how often the keeper looks at the logs of running
// services: the resolution of a line's time.
const LogCheckEvery = time.Second

// indexSuffix names a log file's index of time marks.
const indexSuffix = ".idx"

// logKeeper rolls and dates the logs of running services.
type logKeeper struct {
	rollSize int64
	every    time.Duration

	mu    sync.Mutex       // one roll at a time (the keeper's or a start's)
	sizes map[string]int64 // log path -> size at the last mark
}

func newLogKeeper(o LogOptions) *logKeeper {
	if o.RollSize <= 0 {
		o.RollSize = LogRollSize
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = LogCheckEvery
	}
	return &logKeeper{rollSize: o.RollSize, every: o.CheckEvery, sizes: map[string]int64{}}
}

// keepLogs runs the keeper until the supervisor shuts down.
func (s *Supervisor) keepLogs() {
	t := time.NewTicker(s.logs.every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		for _, u := range s.liveUnits() {
			if err := s.logs.check(u.path); err != nil {
				u.log.Warn("log keeper", "error", err)
			}
		}
	}
}

type liveLog struct {
	path string
	log  hclog.Logger
}

// liveUnits lists the logs of the services with a process running.
func (s *Supervisor) liveUnits() []liveLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []liveLog
	for _, u := range s.units {
		if u.run != nil && !u.run.hasExited() && u.spec.LogPath != "" {
			out = append(out, liveLog{path: u.spec.LogPath, log: u.log})
		}
	}
	return out
}

// check marks the time when the log grew and rolls it when past the bound.
func (k *logKeeper) check(path string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		delete(k.sizes, path)
		return nil
	}
	if err != nil {
		return err
	}
	size, last := fi.Size(), k.sizes[path]
	if size != last {
		if err := appendMark(path, size, fi.ModTime()); err != nil {
			return err
		}
		k.sizes[path] = size
	}
	if size > k.rollSize {
		return k.rollRunning(path)
	}
	return nil
}

// appendMark records that the log's first size bytes were written by at.
func appendMark(path string, size int64, at time.Time) error {
	f, err := shareopen.Open(path+indexSuffix, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("mark log %s: %w", path, err)
	}
	_, err = f.WriteString(strconv.FormatInt(size, 10) + " " + strconv.FormatInt(at.UnixNano(), 10) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mark log %s: %w", path, err)
	}
	return nil
}

// roll is rollLog under the keeper's lock (a start rolls between runs).
func (k *logKeeper) roll(path string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.sizes, path)
	return rollLog(path, k.rollSize)
}

// rollRunning rolls the log of a running service: the older generations
// move up, the log is copied to .1 and emptied in place. k.mu is held.
func (k *logKeeper) rollRunning(path string) error {
	if err := shiftGenerations(path, 1); err != nil {
		return err
	}
	src, err := shareopen.Open(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	defer src.Close()
	dstPath := generation(path, 1)
	dst, err := os.OpenFile(dstPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	var copied int64
	// Copy until caught up (a few passes at most for a service writing
	// fast), then truncate at once: only a write in between is lost.
	for range 8 {
		n, err := io.Copy(dst, io.NewSectionReader(src, copied, 1<<62))
		copied += n
		if err != nil {
			dst.Close()
			return fmt.Errorf("roll log %s: %w", path, err)
		}
		if n == 0 {
			break
		}
	}
	if err := src.Truncate(0); err != nil {
		dst.Close()
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	now := time.Now()
	if err := dst.Close(); err != nil {
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	// The index goes with the copy, closed by a mark at its end.
	if err := os.Rename(path+indexSuffix, dstPath+indexSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("roll log %s: %w", path, err)
	}
	if err := appendMark(dstPath, copied, now); err != nil {
		return err
	}
	delete(k.sizes, path)
	return nil
}

// shiftGenerations drops the oldest generation and moves each other one,
// with its index, up by one, from generation from on (1: keep the current
// file; 0: move it too).
func shiftGenerations(path string, from int) error {
	for _, p := range []string{generation(path, LogGenerations), generation(path, LogGenerations) + indexSuffix} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("roll log %s: drop oldest generation: %w", path, err)
		}
	}
	for g := LogGenerations - 1; g >= from; g-- {
		for _, sfx := range []string{"", indexSuffix} {
			err := os.Rename(generation(path, g)+sfx, generation(path, g+1)+sfx)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("roll log %s: %w", path, err)
			}
		}
	}
	return nil
}

// logFilesAndIndexes is LogFiles with each file's index: what a watch of
// the service's own directory leaves out (its own output is no change).
func logFilesAndIndexes(path string) []string {
	var out []string
	for _, f := range LogFiles(path) {
		out = append(out, f, f+indexSuffix)
	}
	return out
}
