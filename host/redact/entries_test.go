package redact

import (
	"bytes"
	"strings"
	"testing"
)

// TestEntriesRedactsEachWrite: a log entry written whole has its secret
// masked, and the writer reports the length it was given, as a log
// expects.
func TestEntriesRedactsEachWrite(t *testing.T) {
	r := New()
	r.Add("hunter2-secret-value")
	var out bytes.Buffer
	w := r.Entries(&out)
	entry := []byte("level=info password=hunter2-secret-value\n")
	n, err := w.Write(entry)
	if err != nil || n != len(entry) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(entry))
	}
	if got := out.String(); strings.Contains(got, "hunter2") || !strings.HasPrefix(got, "level=info password=") {
		t.Errorf("wrote %q; want the entry with its secret masked", got)
	}
}
