package admission

import (
	"os"
	"path/filepath"
	"testing"
)

func TestJournalSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.json")
	j := &Journal{Path: path}
	if err := j.Add("p/a", map[string]string{"branch": "a"}); err != nil {
		t.Fatal(err)
	}
	j.Add("p/b", nil)
	j.Add("p/c", nil)
	j.Remove("p/b")
	// A new daemon takes what the old one left, once.
	j2 := &Journal{Path: path}
	got, err := j2.Take()
	if err != nil || len(got) != 2 {
		t.Fatalf("took %+v, %v; want p/a and p/c", got, err)
	}
	keys := map[string]string{}
	for _, e := range got {
		keys[e.Key] = string(e.Data)
	}
	if keys["p/a"] != `{"branch":"a"}` || keys["p/c"] != "null" {
		t.Errorf("entries %v", keys)
	}
	if again, _ := j2.Take(); len(again) != 0 {
		t.Errorf("taken twice: %+v", again)
	}
	// No file: nothing queued. A damaged file: an error, and emptied.
	if got, err := (&Journal{Path: filepath.Join(t.TempDir(), "none")}).Take(); err != nil || got != nil {
		t.Errorf("missing file: %v %v", got, err)
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := (&Journal{Path: path}).Take(); err == nil {
		t.Errorf("damaged file read without an error")
	}
	if got, err := (&Journal{Path: path}).Take(); err != nil || len(got) != 0 {
		t.Errorf("after a damaged file: %v %v; want empty", got, err)
	}
}

// FuzzJournalTake: whatever the file holds, Take neither panics nor leaves
// it unreadable for the next daemon.
func FuzzJournalTake(f *testing.F) {
	f.Add([]byte(`[{"key":"p/a","since":"2026-01-02T03:04:05Z","data":{"Project":"p","Name":"a"}}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"key":1}]`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "queue.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		(&Journal{Path: path}).Take()
		if got, err := (&Journal{Path: path}).Take(); err != nil || len(got) != 0 {
			t.Fatalf("after Take: %v %v; want an empty queue", got, err)
		}
	})
}
