package memtrim

import (
	"testing"
	"time"
)

func TestIdleTrimsOncePerQuietSpell(t *testing.T) {
	n := 0
	var proxyLast time.Time
	i := NewIdle(time.Minute, func() { n++ }, func() time.Time { return proxyLast })
	t0 := time.Now()
	if i.Check(t0) {
		t.Fatal("trimmed before a quiet minute passed")
	}
	if !i.Check(t0.Add(2*time.Minute)) || n != 1 {
		t.Fatalf("no trim after a quiet spell (n=%d)", n)
	}
	if i.Check(t0.Add(10*time.Minute)) || n != 1 {
		t.Fatalf("trimmed again with nothing done since (n=%d)", n)
	}

	// A call in flight holds the trim off however long it takes.
	i.Begin()
	if i.Check(time.Now().Add(time.Hour)) {
		t.Fatal("trimmed while a call was in flight")
	}
	i.End()
	if !i.Check(time.Now().Add(2*time.Minute)) || n != 2 {
		t.Fatalf("no trim after the call ended and a quiet spell passed (n=%d)", n)
	}

	// Activity reported by extra (the proxy) counts too.
	proxyLast = time.Now().Add(5 * time.Minute)
	if i.Check(time.Now().Add(5*time.Minute + 30*time.Second)) {
		t.Fatal("trimmed 30s after a proxied request")
	}
	if !i.Check(time.Now().Add(7*time.Minute)) || n != 3 {
		t.Fatalf("no trim once the proxy went quiet (n=%d)", n)
	}
}
