package redisadapter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// TestSizeWeighsTheSlicesKeys: 64 values of 64 KiB under a slice weigh
// about 4 MiB (plus per-key overhead and the allocator's size classes: 80 KiB each under jemalloc), in prefix and db mode; a key of
// another slice is not counted, and a slice with no key is 0 bytes.
func TestSizeWeighsTheSlicesKeys(t *testing.T) {
	forEachServer(t, func(t *testing.T, admin string) {
		for _, mode := range []string{modePrefix, modeDB} {
			t.Run(mode, func(t *testing.T) {
				a := New()
				defer a.Close()
				cfg := map[string]any{"mode": mode}
				name, other := testSlice(t, "size"), testSlice(t, "other")
				size := func() *sdk.SizeResponse {
					t.Helper()
					r, err := a.Size(t.Context(), &sdk.SizeRequest{Header: hdr(), Target: target(admin, name, cfg)})
					if err != nil {
						t.Fatalf("size %s: %v", name, err)
					}
					return r
				}
				provisionT(t, a, admin, name, cfg)
				provisionT(t, a, admin, other, nil)
				if got := size().Bytes; got != 0 {
					t.Errorf("size of an empty slice = %d; want 0", got)
				}
				c := client(t, resolveT(t, a, admin, name, cfg).Address)
				oc := client(t, admin)
				val := bytes.Repeat([]byte("x"), 64<<10)
				for i := range 64 {
					key := fmt.Sprintf("k%d", i)
					if mode == modePrefix {
						key = names.RedisPrefix(name) + key
					}
					if err := c.Set(t.Context(), key, val, 0).Err(); err != nil {
						t.Fatal(err)
					}
					if err := oc.Set(t.Context(), names.RedisPrefix(other)+key, val, 0).Err(); err != nil {
						t.Fatal(err)
					}
				}
				const want = 4 << 20
				got := size()
				if got.Bytes < want || got.Bytes > want*3/2 {
					t.Errorf("size = %d; want about %d (64 values of 64 KiB)", got.Bytes, want)
				}
				if !got.Approximate {
					t.Error("size is not marked approximate")
				}
			})
		}
	})
}
