package browserlog

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse holds Parse to its bounds on any post: it never panics, keeps
// at most MaxPerPost entries of the kinds a page may send, each field
// valid UTF-8 within its size, and every entry survives the log's JSON.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"kind":"console","message":"boom","url":"http://web.main.acme.localhost/"}]`))
	f.Add([]byte(`[{"kind":"fetch","message":"500 /api","status":500},{"kind":"error","message":{"a":1},"stack":"E\n at f"}]`))
	f.Add([]byte(`[{"kind":"note","message":"x"},{"kind":"up"}]`))
	f.Add([]byte("[{\"kind\":\"rejection\",\"message\":\"\xff\xfe\"}]"))
	f.Fuzz(func(t *testing.T, body []byte) {
		es, dropped, err := Parse(body)
		if err != nil {
			if es != nil || dropped != 0 {
				t.Fatalf("error %v with %d entries, %d dropped", err, len(es), dropped)
			}
			return
		}
		if len(es) > MaxPerPost || dropped < 0 {
			t.Fatalf("%d entries, %d dropped", len(es), dropped)
		}
		for _, e := range es {
			if !e.Kind.IsError() || e.Message == "" {
				t.Fatalf("kept %+v", e)
			}
			for _, f := range []struct {
				s string
				n int
			}{{e.Message, MaxMessage}, {e.Stack, MaxStack}, {e.Page, MaxPage}, {e.Source, MaxSource}} {
				if len(f.s) > f.n || !utf8.ValidString(f.s) {
					t.Fatalf("field %.40q: %d bytes (max %d), valid %v", f.s, len(f.s), f.n, utf8.ValidString(f.s))
				}
			}
			if strings.ContainsAny(e.Page+e.Source, "\r\n") {
				t.Fatalf("page or source with a line break: %+v", e)
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var back Entry
			if err := json.Unmarshal(b, &back); err != nil || back.Message != e.Message || back.Stack != e.Stack {
				t.Fatalf("round trip of %+v: %+v, %v", e, back, err)
			}
		}
	})
}
