package sqliteadapter

import (
	"net/url"
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

// FuzzAddress: whatever directory a config names, the address Resolve
// answers parses as a URL whose path is the slice file it also answers in
// values["path"], and that file lies in the directory locate chose.
func FuzzAddress(f *testing.F) {
	for _, s := range []string{"slices", "a b/c", "50%/x", "q?x=1", "h#frag", "tab\there", "ü/ß"} {
		f.Add(s)
	}
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, dir string) {
		target := sdk.Target{Slice: "acme_main", Project: "acme", DataDir: base, Config: map[string]any{"dir": filepath.Join(base, dir)}}
		res, err := New().Resolve(t.Context(), &sdk.ResolveRequest{Target: target})
		if err != nil {
			return
		}
		u, err := url.Parse(res.Address)
		if err != nil {
			t.Fatalf("address %q does not parse: %v", res.Address, err)
		}
		want := filepath.ToSlash(res.Values["path"])
		if !strings.HasPrefix(want, "/") {
			want = "/" + want
		}
		if u.Scheme != "sqlite" || u.Host != "" || u.Path != want {
			t.Fatalf("address %q parses as scheme %q host %q path %q; want sqlite, no host, %q", res.Address, u.Scheme, u.Host, u.Path, want)
		}
		loc, err := locate(&target)
		if err != nil || filepath.Dir(res.Values["path"]) != loc.dir {
			t.Fatalf("path %q is not in the directory locate chose (%v, %v)", res.Values["path"], loc, err)
		}
	})
}
