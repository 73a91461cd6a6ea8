package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestNonJSONLineGetsParseError: a line that is not JSON is answered with
// a JSON-RPC -32700 Parse error (id null) and the session serves on: the
// initialize beside it is answered. A last line without its newline is a
// line too — it was dropped unanswered at EOF. Replies may come in any
// order (mcp-go answers requests on their own goroutines).
func TestNonJSONLineGetsParseError(t *testing.T) {
	cases := []struct {
		name, in    string
		parseErrors int
		initialized bool
	}{
		{"then initialize", "not json\n" + initializeLine + "\n", 1, true},
		{"last, no newline", initializeLine + "\nnot json", 1, true},
		{"only, no newline", "not json", 1, false},
		{"initialize, no newline", initializeLine, 0, true},
		{"half a JSON object", "{\"jsonrpc\":\n" + initializeLine + "\n", 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{Dir: t.TempDir()})
			var out bytes.Buffer
			// One byte per Read: a line split across reads is still one line.
			if err := s.Serve(context.Background(), iotest.OneByteReader(strings.NewReader(c.in)), &out); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			parseErrors, initialized := 0, false
			for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				var m struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Result  json.RawMessage `json:"result"`
					Error   *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" {
					t.Fatalf("a reply is not JSON-RPC 2.0: %q (%v)", line, err)
				}
				switch {
				case m.Error != nil && m.Error.Code == -32700 && string(m.ID) == "null":
					parseErrors++
				case m.Error == nil && string(m.ID) == "1" && len(m.Result) > 0:
					initialized = true
				default:
					t.Errorf("unexpected reply %s", line)
				}
			}
			if parseErrors != c.parseErrors || initialized != c.initialized {
				t.Errorf("got %d -32700 replies (id null), initialize answered %v; want %d, %v:\n%s", parseErrors, initialized, c.parseErrors, c.initialized, out.String())
			}
		})
	}
}

// TestLineEnded: the input passes through unchanged, with one newline
// after a last line that has none.
func TestLineEnded(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"a\n":       "a\n",
		"a":         "a\n",
		"a\nb":      "a\nb\n",
		"a\n\n":     "a\n\n",
		"\x00":      "\x00\n",
		"{}\n{}":    "{}\n{}\n",
		"line\r\n":  "line\r\n",
		"partial\r": "partial\r\n",
	} {
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(in), "byte by byte": iotest.OneByteReader(strings.NewReader(in)), "data with EOF": iotest.DataErrReader(strings.NewReader(in))} {
			got, err := io.ReadAll(&lineEnded{r: r})
			if err != nil || string(got) != want {
				t.Errorf("%s %q: got %q, %v; want %q", name, in, got, err, want)
			}
		}
	}
}
