package golden

import (
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
