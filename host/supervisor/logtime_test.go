package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadLogLinesDates: each line takes the time of the first mark at or
// past its end (the keeper's), Binky's own lines their own, lines after
// the last mark the file's last write; since keeps the newer lines, across
// generations.
func TestReadLogLinesDates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "api.log")
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	writeFile(t, path+".1", "old-1\nold-2\n")
	if err := appendMark(path+".1", 12, t0); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "a\nb\n"+LinePrefix+t0.Add(5*time.Minute).Format(time.RFC3339)+" restarted\nc\n")
	if err := appendMark(path, 4, t0.Add(time.Minute)); err != nil { // a and b
		t.Fatal(err)
	}
	all, err := ReadLogLines(path, 0, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range all {
		got = append(got, l.Text+"@"+l.Time.UTC().Format("15:04"))
	}
	mtime := fileMtime(t, path).UTC().Format("15:04")
	want := []string{"old-1@12:00", "old-2@12:00", "a@12:01", "b@12:01", LinePrefix + "2026-12-07T12:05:00Z restarted@12:05", "c@" + mtime}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ReadLogLines = %q; want %q", got, want)
	}
	since, err := ReadLogLines(path, 0, t0.Add(30*time.Second))
	if err != nil || len(since) != 4 || since[0].Text != "a" {
		t.Errorf("ReadLogLines since 12:00:30 = %+v, %v; want a, b, the restart, c", since, err)
	}
	last, err := ReadLogLines(path, 2, t0.Add(30*time.Second))
	if err != nil || len(last) != 2 || last[1].Text != "c" {
		t.Errorf("ReadLogLines 2 since 12:00:30 = %+v, %v; want the restart and c", last, err)
	}
}

func fileMtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// FuzzParseMarks: any index text parses without panic into marks that
// never go back in offset or time.
func FuzzParseMarks(f *testing.F) {
	f.Add([]byte("12 1765108800000000000\n40 1765108801000000000\n"))
	f.Add([]byte("x y\n-1 5\n12\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		marks := parseMarks(bytes.NewReader(data))
		for i := 1; i < len(marks); i++ {
			if marks[i].off < marks[i-1].off || marks[i].at.Before(marks[i-1].at) {
				t.Fatalf("marks go back: %+v", marks)
			}
		}
	})
}
