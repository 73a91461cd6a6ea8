package events

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseLine: any line either fails to parse or yields an event that
// survives a write and a read unchanged.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"ts":"2025-01-01T00:00:00Z","event":"up_done","project":"p","worktree":"w","service":"","adapter":"","error":""}`))
	f.Add([]byte(`{"event":"service_exited","exit_code":-1,"pid":7,"ports":[1,2]}`))
	f.Add([]byte(`{"event":""}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		if e.Event == "" {
			t.Fatalf("parsed an event without a name from %q", line)
		}
		b1, err := json.Marshal(e)
		if err != nil {
			return // a time outside what RFC 3339 can write; Emit uses now
		}
		e2, err := ParseLine(b1)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b1, err)
		}
		b2, _ := json.Marshal(e2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the event:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzTail: reading backwards in small chunks finds exactly the events a
// plain forward scan finds, whatever the file holds.
func FuzzTail(f *testing.F) {
	f.Add([]byte("{\"event\":\"a\"}\n{\"event\":\"b\"}\n"), uint8(3), uint8(4))
	f.Add([]byte("junk\n\n{\"event\":\"a\",\"worktree\":\"w\"}\n{\"event\":\"b\""), uint8(1), uint8(1))
	f.Add([]byte("{\"event\":\"x\"}"), uint8(10), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, n, chunk uint8) {
		var all []Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			if e, err := ParseLine(line); err == nil {
				all = append(all, e)
			}
		}
		want := all[max(0, len(all)-int(n)):]
		if n == 0 {
			want = nil
		}
		got, err := tail(bytes.NewReader(data), int64(len(data)), int(n), nil, int(chunk)+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("tail(%d, chunk %d) = %v; want %v", n, int(chunk)+1, got, want)
		}
	})
}
