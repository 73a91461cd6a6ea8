package adapter

import (
	"bytes"
	"testing"
)

// FuzzParseCache: whatever is in adapters.cache.json, parsing never panics,
// and what it accepts encodes back to a file it accepts unchanged.
func FuzzParseCache(f *testing.F) {
	f.Add([]byte(`{"version":1,"adapters":[{"path":"/usr/bin/binky-adapter-redis","size":10,"mtime_ns":5,"describe":{"protocol":1,"name":"redis","aliases":["valkey"],"clone":false,"rpc":true}}]}`))
	f.Add([]byte(`{"version":1,"adapters":[],"failures":[{"path":"/opt/binky-adapter-x","size":1,"mtime_ns":2,"error":"describe: timed out"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseCache(b)
		if err != nil {
			return
		}
		enc := c.encode()
		c2, err := parseCache(enc)
		if err != nil {
			t.Fatalf("re-parse of an encoded cache: %v", err)
		}
		if !bytes.Equal(c2.encode(), enc) {
			t.Fatalf("encode(parse(encode(x))) differs from encode(x)")
		}
	})
}
