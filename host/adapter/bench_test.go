package adapter

import (
	"testing"
)

// BenchmarkOneShot is one resolve through the one-shot tier: a process per
// call (target ≤ 15 ms).
func BenchmarkOneShot(b *testing.B) {
	benchResolve(b, "ok")
}

// BenchmarkRPCWarm is one resolve through a warm go-plugin session (target
// ≤ 1 ms).
func BenchmarkRPCWarm(b *testing.B) {
	benchResolve(b, "ok-rpc")
}

func benchResolve(b *testing.B, mode string) {
	dir := b.TempDir()
	installFake(b, dir, mode)
	h, _ := testHost(b, Options{}, dir)
	c, err := h.Open(b.Context(), "fake-"+mode)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := resolveReq("acme_main")
	if _, err := c.Resolve(b.Context(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Resolve(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
