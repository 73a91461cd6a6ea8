package proxy

import (
	"bytes"
	"io"
	"testing"
)

// FuzzBrowserInsert holds the page rewriting to its promise on any page
// and any Content-Security-Policy: the script goes at a place inside what
// was read, never inside a tag it found, and the rest of the page comes
// through unchanged; the CSP reader never panics.
func FuzzBrowserInsert(f *testing.F) {
	f.Add([]byte(testPage), "default-src 'self'")
	f.Add([]byte("<html><HEAD data-x=1>\n<meta charset=\"utf-8\"></head>"), "script-src 'unsafe-inline'")
	f.Add([]byte(`<head><meta http-equiv = 'Content-Security-Policy' content="x"></head>`), "")
	f.Add([]byte("\xef\xbb\xbfhello"), "script-src;,connect-src *")
	f.Add([]byte("<header><head"), "SCRIPT-SRC 'nonce-x' 'unsafe-inline'")
	f.Fuzz(func(t *testing.T, page []byte, csp string) {
		_ = cspForbids([]string{csp})
		head, err := readHead(bytes.NewReader(page), 256)
		if err != nil || !bytes.HasPrefix(page, head) {
			t.Fatalf("readHead: %q, %v", head, err)
		}
		at, why := insertAt(head, len(head) < 256)
		if why != "" {
			return
		}
		if at < 0 || at > len(head) {
			t.Fatalf("insertAt = %d outside %d bytes", at, len(head))
		}
		if at > 0 && head[at-1] != '>' && !(at == 3 && bytes.HasPrefix(head, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("insertAt = %d, not after a tag: %q", at, head[:at])
		}
		out, _ := io.ReadAll(io.MultiReader(bytes.NewReader(head[:at]), bytes.NewReader([]byte(scriptTag)), bytes.NewReader(head[at:]), bytes.NewReader(page[len(head):])))
		if !bytes.Equal(bytes.Replace(out, []byte(scriptTag), nil, 1), page) {
			t.Fatal("the page without the script is not the page")
		}
	})
}
