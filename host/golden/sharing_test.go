package golden

import (
	"strings"
	"testing"
	"time"
)

func TestSharing(t *testing.T) {
	for _, tc := range []struct{ method, want string }{
		{"", ""},
		{"reflink", SharingCopyOnWrite},
		{"file_copy, copy-on-write", SharingCopyOnWrite},
		{"file_copy, clone requested", SharingUnverified},
		{"file_copy, copied", SharingCopied},
		{"file_copy", SharingCopied},
		{"wal_log", SharingCopied},
		{"copy", SharingCopied},
		{"table_copy", SharingCopied},
		{"aggregate_out", SharingCopied},
	} {
		if got := Sharing(tc.method); got != tc.want {
			t.Errorf("Sharing(%q) = %q; want %q", tc.method, got, tc.want)
		}
	}
}

func TestCloned(t *testing.T) {
	r := &Record{}
	now := time.Now()
	r.Cloned("feat_a", "file_copy, copy-on-write", now)
	r.Cloned("feat_b", "file_copy, copied", now)
	r.Cloned("feat_c", "", now)
	if r.Method != "file_copy, copied" {
		t.Errorf("method %q; want the latest clone's", r.Method)
	}
	if got := r.Methods["feat_a"]; got != "file_copy, copy-on-write" {
		t.Errorf("feat_a's method %q", got)
	}
	if _, ok := r.Methods["feat_c"]; ok {
		t.Error("a clone without a method recorded one")
	}
	if len(r.Worlds) != 3 {
		t.Errorf("worlds %v; want 3", r.Worlds)
	}
}

// FuzzSharing: any method an adapter sends is classified without a panic,
// and copy-on-write is only ever claimed for a method that claims it.
func FuzzSharing(f *testing.F) {
	for _, m := range []string{"", "reflink", "file_copy, copy-on-write", "file_copy, clone requested", "file_copy, copied", "wal_log"} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, method string) {
		got := Sharing(method)
		if got == SharingCopyOnWrite && method != "reflink" && !strings.Contains(method, "copy-on-write") {
			t.Errorf("Sharing(%q) claims copy-on-write", method)
		}
		if (got == "") != (method == "") {
			t.Errorf("Sharing(%q) = %q", method, got)
		}
	})
}
