package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
)

// Line is one line of a service log and when it was written: exact for
// Binky's own lines, else the time of the keeper's first mark at or past
// the line's end (within LogCheckEvery of the write, never before it), or
// the file's last write for lines after the last mark.
type Line struct {
	Text string
	Time time.Time
}

// ReadLogLines is ReadLogs with each line's time; since, when not zero,
// keeps only the lines written at or after it (n counts those).
func ReadLogLines(path string, n int, since time.Time) ([]Line, error) {
	return readLogLines(path, n, since, -1)
}

// readLogLines is ReadLogLines with the current file read only up to
// curLimit bytes (all of it when curLimit < 0).
func readLogLines(path string, n int, since time.Time, curLimit int64) ([]Line, error) {
	// A file that began before since means the older ones did too.
	lines, err := newestFirst(path, n, curLimit, func(file string, _ int, limit int64) ([]Line, bool, error) {
		return datedLines(file, limit, since)
	})
	// A line's time is its mark's, good to about a second: across a roll
	// or between two marks a line may come out dated a moment before the
	// one above it. Lines are in the order they were written, so their
	// times are too.
	for i := 1; i < len(lines); i++ {
		if lines[i].Time.Before(lines[i-1].Time) {
			lines[i].Time = lines[i-1].Time
		}
	}
	return lines, err
}

// datedLines reads one log file with the times of its lines, keeping those
// at or after since; older says that lines before since were dropped.
func datedLines(path string, limit int64, since time.Time) (lines []Line, older bool, err error) {
	f, err := shareopen.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := fi.Size()
	if limit >= 0 && limit < size {
		size = limit
	}
	marks := readMarks(path + indexSuffix)
	start := int64(0)
	if !since.IsZero() {
		// Skip the bytes every mark before since covers: all older.
		for _, m := range marks {
			if !m.at.Before(since) {
				break
			}
			start = min(m.off, size)
		}
	}
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if start > 0 {
		older = true
		// Start at a line's beginning (a mark may fall inside a line only
		// when the file was rolled under a writer).
		one := make([]byte, 1)
		if _, err := f.ReadAt(one, start-1); err == nil && one[0] != '\n' {
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				start += int64(i + 1)
				buf = buf[i+1:]
			}
		}
	}
	mi := 0
	end := start
	for _, text := range splitLines(buf) {
		end += int64(len(text)) + 1
		for mi < len(marks) && marks[mi].off < min(end, size) {
			mi++
		}
		at := fi.ModTime()
		if mi < len(marks) {
			at = marks[mi].at
		}
		if t, ok := ownLineTime(text); ok {
			at = t
		}
		if !since.IsZero() && at.Before(since) {
			older = true
			continue
		}
		lines = append(lines, Line{Text: strings.TrimSuffix(text, "\r"), Time: at})
	}
	return lines, older, nil
}

type mark struct {
	off int64
	at  time.Time
}

// readMarks reads a log's index: "<offset> <unix nanoseconds>" lines, in
// the order written. A missing or unreadable index is no marks; a line that
// does not parse, or goes back in offset or time, is skipped.
func readMarks(path string) []mark {
	f, err := shareopen.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseMarks(f)
}

func parseMarks(r io.Reader) []mark {
	var marks []mark
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		off, ns, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		o, err1 := strconv.ParseInt(off, 10, 64)
		t, err2 := strconv.ParseInt(ns, 10, 64)
		if err1 != nil || err2 != nil || o < 0 {
			continue
		}
		m := mark{off: o, at: time.Unix(0, t)}
		if k := len(marks); k > 0 && (m.off < marks[k-1].off || m.at.Before(marks[k-1].at)) {
			continue
		}
		marks = append(marks, m)
	}
	return marks
}

// ownLineTime is the time a line Binky wrote into the log carries.
func ownLineTime(text string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(text, LinePrefix)
	if !ok {
		return time.Time{}, false
	}
	stamp, _, _ := strings.Cut(rest, " ")
	t, err := time.Parse(time.RFC3339, stamp)
	return t, err == nil
}
