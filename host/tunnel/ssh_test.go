package tunnel

import "testing"

func TestMasterPid(t *testing.T) {
	if got := MasterPid("Master running (pid=4242)\r"); got != 4242 {
		t.Fatalf("MasterPid = %d; want 4242", got)
	}
	if got := MasterPid("Control socket connect(/x): No such file"); got != 0 {
		t.Fatalf("MasterPid = %d; want 0", got)
	}
}
