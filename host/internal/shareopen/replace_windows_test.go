package shareopen

import (
	"os"
	"path/filepath"
	"testing"
)

// The rename is refused while os.Open's handle holds the target, and
// goes through once it is closed: the wait is what makes it work.
func TestReplaceWaitsForTheReader(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "reach.json")
	tmp := filepath.Join(dir, ".reach-new")
	for _, f := range []string{target, tmp} {
		if err := os.WriteFile(f, []byte(filepath.Base(f)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	refused := 0
	afterRefused = func() {
		refused++
		reader.Close()
	}
	defer func() { afterRefused = nil }()
	if err := Replace(tmp, target); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if refused == 0 {
		t.Fatal("the rename over a held file was never refused: this test shows nothing")
	}
	if b, _ := os.ReadFile(target); string(b) != ".reach-new" {
		t.Fatalf("target holds %q; want the new file", b)
	}
}
