package shareopen

import (
	"os"
	"path/filepath"
	"testing"
)

// A file a reader holds open (as os.Open holds it, without delete
// sharing) is replaced once the reader lets go, not refused.
func TestReplaceWhileRead(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "reach.json")
	if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".reach-new")
	if err := os.WriteFile(tmp, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Replace(tmp, target) }()
	reader.Close()
	if err := <-done; err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new\n" {
		t.Fatalf("target holds %q; want the new file", b)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the new file is still under its temporary name (%v)", err)
	}
}

// A refusal no reader explains (the target is a directory) is said, not
// waited on.
func TestReplaceOverDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "d")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "f")
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(tmp, target); err == nil {
		t.Fatal("a file renamed over a directory")
	}
}
