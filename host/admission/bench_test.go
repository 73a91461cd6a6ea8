package admission

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkAcquireUnlimited is admission's own cost for one up when
// nothing is limited: 20 concurrent Acquire/Done/Release of distinct
// worlds, against the real pressure source (/proc/meminfo and statfs).
// The reported ns/op is per up.
func BenchmarkAcquireUnlimited(b *testing.B) {
	lim := Limits{RAMReserve: 1, DiskHeadroom: 0.001}
	c := New(Options{Source: System{Dir: b.TempDir()}, Limits: func() Limits { return lim }})
	ctx := context.Background()
	c.Tick(ctx)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("p/w%d", i)
	}
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Acquire(ctx, k, lim, false, nil); err != nil {
					b.Error(err)
				}
				c.Done(k)
			}()
		}
		wg.Wait()
		for _, k := range keys {
			c.Release(k)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20, "ns/up")
}

// BenchmarkSystemSample is the cost of one pressure sample.
func BenchmarkSystemSample(b *testing.B) {
	s := System{Dir: b.TempDir()}
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
