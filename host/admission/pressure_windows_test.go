//go:build windows

package admission

import "testing"

func TestMemInfoWindows(t *testing.T) {
	total, avail, err := memInfo()
	if err != nil {
		t.Fatal(err)
	}
	if total < 64<<20 || avail == 0 || avail > total {
		t.Errorf("memInfo = %d total, %d available; want 0 < available <= total, total at least 64 MiB", total, avail)
	}
}
