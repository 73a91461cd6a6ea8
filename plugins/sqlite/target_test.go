package sqliteadapter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func TestCheckNameAccepts(t *testing.T) {
	for _, name := range []string{"acme_main", "acme_golden_base", "a", "A-b.c_9", "console", "com", "lpt10", strings.Repeat("x", maxName)} {
		if err := checkName("slice", name); err != nil {
			t.Errorf("checkName(%q): got %v; want ok", name, err)
		}
	}
}

// FuzzSlicePath checks that any slice name the adapter accepts names a
// file directly inside the slice directory.
func FuzzSlicePath(f *testing.F) {
	for _, s := range []string{"acme_main", "../x", "a/b", "..", "a\x00", "nul.db", "C:x", `a\b`, ".x"} {
		f.Add(s)
	}
	dir := filepath.Join(f.TempDir(), "acme")
	loc := location{dir: dir}
	f.Fuzz(func(t *testing.T, slice string) {
		path, err := loc.path(slice)
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("path(%q): got code %s; want invalid", slice, sdk.CodeOf(err))
			}
			return
		}
		if filepath.Dir(path) != dir || filepath.Base(path) != slice+".db" {
			t.Fatalf("path(%q) = %s; want a file %s.db directly inside %s", slice, path, slice, dir)
		}
		if strings.ContainsAny(slice, "/\\\x00:") || strings.HasPrefix(slice, ".") {
			t.Fatalf("path(%q) accepted a separator, NUL, colon or leading dot", slice)
		}
	})
}
