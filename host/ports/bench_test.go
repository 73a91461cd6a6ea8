package ports

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/registry"
)

// BenchmarkReserveRelease measures reserving a new 5-port block (15 real
// binds and one write transaction) and releasing it.
func BenchmarkReserveRelease(b *testing.B) {
	ctx := context.Background()
	reg, err := registry.Open(ctx, filepath.Join(b.TempDir(), registry.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	a, err := New(reg, Options{Range: [2]int{25000, 25999}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := a.Reserve(ctx, "p", "w", 5, [2]int{}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := a.Release(ctx, "p", "w"); err != nil {
			b.Fatal(err)
		}
	}
}
