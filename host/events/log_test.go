package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/redact"
)

func openLog(t *testing.T, r *redact.Redactor) (*Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.log")
	l, err := Open(path, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func TestEmitWritesOneJSONLine(t *testing.T) {
	t.Parallel()
	l, path := openLog(t, nil)
	ts := time.Date(2025, 3, 4, 5, 6, 7, 891011121, time.FixedZone("X", 3600))
	if err := l.Emit(Event{TS: ts, Event: ServiceExited, Project: "shop", Worktree: "feat-a", Service: "web", PID: 42, ExitCode: IntPtr(0)}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2025-03-04T04:06:07.891011121Z","event":"service_exited","project":"shop","worktree":"feat-a","service":"web","adapter":"","error":"","pid":42,"exit_code":0}` + "\n"
	if got := string(b); got != want {
		t.Errorf("events.log =\n%s; want\n%s", got, want)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); runtime.GOOS != "windows" && got != 0o600 { // Windows: ACLs, not modes
		t.Errorf("mode = %v; want 0600", got)
	}
}

func TestEmitFillsTimestamp(t *testing.T) {
	t.Parallel()
	l, path := openLog(t, nil)
	before := time.Now()
	if err := l.Emit(Event{Event: DaemonStarted, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	evs, err := Tail(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("got %d events; want 1", len(evs))
	}
	if ts := evs[0].TS; ts.Before(before.Add(-time.Second)) || ts.Location() != time.UTC {
		t.Errorf("ts = %v; want a UTC time not before %v", ts, before)
	}
}

func TestEmitRedacts(t *testing.T) {
	t.Parallel()
	r := redact.New("hunter22", "postgres://app:s3cret-pw@db/app")
	l, path := openLog(t, r)
	err := l.Emit(Event{
		Event:   SliceFailed,
		Adapter: "postgres",
		Error:   `dial postgres://app:s3cret-pw@db/app: password "s3cret-pw" rejected; hunter22`,
		Detail:  "stderr: hunter\n22 hunter22",
		Step:    "hunter22",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hunter22", "s3cret-pw"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("events.log contains secret %q:\n%s", s, b)
		}
	}
	evs, _ := Tail(path, 1)
	if len(evs) != 1 {
		t.Fatalf("got %d events; want 1", len(evs))
	}
	if want := `dial ***: password "***" rejected; ***`; evs[0].Error != want {
		t.Errorf("error = %q; want %q", evs[0].Error, want)
	}
}

func TestEmitCutsLongText(t *testing.T) {
	t.Parallel()
	l, path := openLog(t, nil)
	long := strings.Repeat("é", MaxText) // 2 bytes a rune
	if err := l.Emit(Event{Event: UpFailed, Error: long}); err != nil {
		t.Fatal(err)
	}
	evs, _ := Tail(path, 1)
	if len(evs) != 1 {
		t.Fatalf("got %d events; want 1", len(evs))
	}
	got := evs[0].Error
	if len(got) > MaxText || !strings.HasSuffix(got, truncMark) || !utf8Valid(got) {
		t.Errorf("cut error: %d bytes, suffix %q; want ≤ %d valid UTF-8 bytes ending %q", len(got), got[max(0, len(got)-10):], MaxText, truncMark)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestEmitRefusesNamelessAndClosed(t *testing.T) {
	t.Parallel()
	l, _ := openLog(t, nil)
	if err := l.Emit(Event{}); err == nil {
		t.Errorf("Emit without a name: got nil; want an error")
	}
	l.Close()
	if err := l.Emit(Event{Event: DaemonStopped}); err == nil {
		t.Errorf("Emit after Close: got nil; want an error")
	}
	var nilLog *Log
	if err := nilLog.Emit(Event{Event: DaemonStopped}); err != nil {
		t.Errorf("nil Log Emit = %v; want nil", err)
	}
}

func TestTailAndFilter(t *testing.T) {
	t.Parallel()
	l, path := openLog(t, nil)
	for i := range 50 {
		wt := []string{"a", "b"}[i%2]
		if err := l.Emit(Event{Event: ServiceStarted, Project: "p", Worktree: wt, PID: i}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		n    int
		keep func(Event) bool
		want []int
	}{
		{"last three", 3, nil, []int{47, 48, 49}},
		{"more than there are", 100, ForWorktree("p", "a"), evens(0, 50)},
		{"worktree b", 2, ForWorktree("p", "b"), []int{47, 49}},
		{"any project", 1, ForWorktree("", "a"), []int{48}},
		{"other project", 5, ForWorktree("q", "a"), nil},
		{"zero", 0, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := TailFunc(path, tc.n, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			if got := pids(evs); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("pids = %v; want %v", got, tc.want)
			}
		})
	}
	evs, err := Tail(filepath.Join(t.TempDir(), "none.log"), 5)
	if err != nil || len(evs) != 0 {
		t.Errorf("Tail of a missing log = %v, %v; want no events, nil", evs, err)
	}
}

func evens(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i += 2 {
		out = append(out, i)
	}
	return out
}

func pids(evs []Event) []int {
	var out []int
	for _, e := range evs {
		out = append(out, e.PID)
	}
	return out
}

func TestTailSkipsGarbage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.log")
	content := `not json
{"ts":"2025-01-01T00:00:00Z","event":"up_started","worktree":"a"}
{"ts":"2025-01-01T00:00:01Z"}

{"ts":"2025-01-01T00:00:02Z","event":"up_done","worktree":"a"}
{"ts":"2025-01-01T00:00:03Z","event":"torn`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, err := Tail(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Event)
	}
	if got, want := strings.Join(names, ","), "up_started,up_done"; got != want {
		t.Errorf("events = %s; want %s", got, want)
	}
}

// TestConcurrentAppends has goroutines of this process and two other
// processes append to one log at once; every line must be a whole event.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	l, path := openLog(t, nil)
	const perWriter = 200
	var cmds []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
		cmd.Env = append(os.Environ(), "BINKY_EVENTS_HELPER="+path, "BINKY_EVENTS_HELPER_ID=proc"+strconv.Itoa(i), "BINKY_EVENTS_HELPER_N="+strconv.Itoa(perWriter))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range perWriter {
				if err := l.Emit(Event{Event: ServiceRestarting, Worktree: fmt.Sprintf("g%d", g), Attempt: i, Error: strings.Repeat("x", 3000)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("appender process: %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("torn line %.80q: %v", sc.Text(), err)
		}
		counts[e.Worktree]++
	}
	want := map[string]int{"g0": perWriter, "g1": perWriter, "g2": perWriter, "g3": perWriter, "proc0": perWriter, "proc1": perWriter}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("lines per writer = %v; want %v", counts, want)
	}
}

func TestHelperAppender(t *testing.T) {
	path := os.Getenv("BINKY_EVENTS_HELPER")
	if path == "" {
		t.Skip("helper process for TestConcurrentAppends")
	}
	n, _ := strconv.Atoi(os.Getenv("BINKY_EVENTS_HELPER_N"))
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		if err := l.Emit(Event{Event: ServiceRestarting, Worktree: os.Getenv("BINKY_EVENTS_HELPER_ID"), Attempt: i, Error: strings.Repeat("y", 3000)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsListEveryEvent keeps docs/events.md and Names in step.
func TestDocsListEveryEvent(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(b), "\n## Events\n")
	if !ok {
		t.Fatalf("docs/events.md has no \"## Events\" section")
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(list, -1) {
		documented[m[1]] = true
	}
	known := map[string]bool{}
	for _, n := range Names() {
		if known[n] {
			t.Errorf("Names lists %s twice", n)
		}
		known[n] = true
		if !documented[n] {
			t.Errorf("event %s is not in docs/events.md", n)
		}
	}
	for n := range documented {
		if !known[n] {
			t.Errorf("docs/events.md lists %s, which Names does not", n)
		}
	}
}
