package wine

import "testing"

// Skip skips t when it runs under Wine, with why (what Wine lacks or does
// differently) as the reason, so the Windows tier lists it.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Under() {
		t.Skip("under Wine: " + why + " (docs/windows.md)")
	}
}
