package client

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func TestCheckReply(t *testing.T) {
	tests := []struct {
		in      string
		want    string // the reply returned; "" when an error is wanted
		wantErr string
	}{
		{in: `{"ok":true}`, want: `{"ok":true}`},
		{in: " \n{\"ok\":false,\"error\":\"x\",\"code\":\"auth\"}\n", want: `{"ok":false,"error":"x","code":"auth"}`},
		{in: `{"address":"a","ok":true}`, want: `{"address":"a","ok":true}`},
		{in: ``, wantErr: "reply is empty"},
		{in: " \n\t", wantErr: "reply is empty"},
		{in: `hello`, wantErr: "not a JSON object"},
		{in: `[{"ok":true}]`, wantErr: "not a JSON object"},
		{in: `{"ok":true}{"ok":true}`, wantErr: "more than one JSON value"},
		{in: `{"ok":true} trailing`, wantErr: "more than one JSON value"},
		{in: `{"ok":true`, wantErr: "not valid JSON"},
		{in: `{"address":"a"}`, wantErr: `no "ok" field`},
		{in: `{"ok":"yes"}`, wantErr: `not a boolean`},
		{in: `{"ok":null}`, wantErr: `not a boolean`},
		{in: `{"ok":true,"pad":"` + strings.Repeat("a", sdk.MaxMessage) + `"}`, wantErr: "limit"},
	}
	for _, tt := range tests {
		got, err := CheckReply([]byte(tt.in))
		name := tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CheckReply(%q): got %v; want an error containing %q", name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("CheckReply(%q): got %q, %v; want %q", name, got, err, tt.want)
		}
	}
}

// FuzzCheckReply: whatever an adapter prints, CheckReply never panics, and
// what it accepts is one JSON object with a boolean ok that it accepts
// again unchanged.
func FuzzCheckReply(f *testing.F) {
	f.Add([]byte(`{"ok":true,"address":"redis://127.0.0.1:6379/0"}`))
	f.Add([]byte(`{"ok":false,"error":"no","code":"invalid"}`))
	f.Add([]byte(`{"ok":true}{"ok":true}`))
	f.Add([]byte("garbage\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := CheckReply(b)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", got, err)
		}
		if ok := string(m["ok"]); ok != "true" && ok != "false" {
			t.Fatalf("accepted %q with ok = %q", got, ok)
		}
		again, err := CheckReply(got)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("CheckReply(CheckReply(x)) = %q, %v; want %q", again, err, got)
		}
		_ = sdk.DecodeReply(got, nil)
	})
}

func TestSnippet(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 5000)
	if got := Snippet(long); len(got) > SnippetLen+10 {
		t.Errorf("Snippet of 5000 bytes is %d bytes; want at most %d", len(got), SnippetLen+10)
	}
	if got, want := Snippet([]byte("hi\n")), `"hi\n"`; got != want {
		t.Errorf("Snippet: got %s; want %s", got, want)
	}
}

func TestTail(t *testing.T) {
	tl := newTail(8)
	_, _ = tl.Write([]byte("abcd"))
	_, _ = tl.Write([]byte("efghij"))
	got := string(tl.take())
	if want := "[earlier stderr dropped: 2 bytes]\ncdefghij"; got != want {
		t.Errorf("tail: got %q; want %q", got, want)
	}
	_, _ = tl.Write([]byte("0123456789xyz"))
	if got, want := string(tl.take()), "[earlier stderr dropped: 5 bytes]\n56789xyz"; got != want {
		t.Errorf("tail of one long write: got %q; want %q", got, want)
	}
	if got := tl.take(); got != nil {
		t.Errorf("tail after take: got %q; want nothing", got)
	}
}

func TestMinimalEnv(t *testing.T) {
	in := []string{"PATH=/bin", "HOME=/h", "TMPDIR=/t", "LANG=C", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x", "PGPASSWORD=y", "BINKY_HOME=/b", "=odd", "noequals"}
	got := strings.Join(MinimalEnv(in), " ")
	if want := "PATH=/bin HOME=/h TMPDIR=/t LANG=C LC_ALL=C"; got != want {
		t.Errorf("MinimalEnv: got %q; want %q", got, want)
	}
	if got, want := strings.Join(SetEnv([]string{"PATH=/a", "HOME=/h"}, "PATH", "/b"), " "), "HOME=/h PATH=/b"; got != want {
		t.Errorf("SetEnv: got %q; want %q", got, want)
	}
}

func TestHandshakeError(t *testing.T) {
	err := handshakeError(errorString("Unrecognized remote plugin message: hello there\nThis usually means\n  the plugin was not compiled"))
	for _, w := range []string{"before the go-plugin handshake", `"hello there"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want it to contain %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "usually means") {
		t.Errorf("error %q: want go-plugin's notes left out", err)
	}
	long := handshakeError(errorString("Unrecognized remote plugin message: " + strings.Repeat("z", 10000)))
	if n := len(long.Error()); n > 600 {
		t.Errorf("error for a long line is %d bytes; want it bounded", n)
	}
	if got := handshakeError(errorString("Unrecognized remote plugin message: \nFailed to read any lines")); !strings.Contains(got.Error(), "without the go-plugin handshake") {
		t.Errorf("empty stdout: got %q", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
