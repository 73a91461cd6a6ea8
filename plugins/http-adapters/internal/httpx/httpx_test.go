package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

func TestParseAdminURL(t *testing.T) {
	ep, err := ParseAdminURL("https://u:p%40ss@h.example:9200/base/?x=1", "http://h")
	if err != nil {
		t.Fatal(err)
	}
	if ep.Base.String() != "https://h.example:9200/base" || ep.User != "u" || ep.Password != "p@ss" || ep.Query.Get("x") != "1" {
		t.Errorf("parsed %s %q %q %v", ep.Base, ep.User, ep.Password, ep.Query)
	}
	if got := ep.URL(nil, "api", "vhosts", "a/b c"); got != "https://h.example:9200/base/api/vhosts/a%2Fb%20c" {
		t.Errorf("URL = %s", got)
	}
	for _, bad := range []string{"", "amqp://h", "http://", "http://u:S3cr3t/9@h", "http://h:port", "http://u:pw#x@h", "http://[::1", "http://a b/"} {
		_, err := ParseAdminURL(bad, "http://h")
		if sdk.CodeOf(err) != sdk.CodeInvalid {
			t.Errorf("ParseAdminURL(%q): %v; want code invalid", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "S3cr3t") {
			t.Errorf("ParseAdminURL(%q) shows the password: %v", bad, err)
		}
	}
}

// TestClassifyAndFail: replies and transport failures get the codes the
// host acts on, Fail's message is one line, and a server that echoes the
// password back (some do, in "unable to authenticate" bodies) has it
// scrubbed.
func TestClassifyAndFail(t *testing.T) {
	const pw = "Echoed-Pa55word"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/401":
			w.WriteHeader(401)
			w.Write([]byte("bad credentials for\nuser u password " + pw))
		case "/400":
			w.WriteHeader(400)
		case "/409":
			w.WriteHeader(409)
		case "/503":
			w.WriteHeader(503)
		case "/500":
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	admin := strings.Replace(srv.URL, "http://", "http://u:"+pw+"@", 1)
	ep, err := ParseAdminURL(admin, "http://h")
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	for path, want := range map[string]sdk.Code{"/401": sdk.CodeAuth, "/400": sdk.CodeInvalid, "/409": sdk.CodeConflict, "/503": sdk.CodeUnreachable, "/500": sdk.CodeInternal} {
		_, err := c.Call(t.Context(), ep, Request{Method: "GET", URL: ep.Base.String() + path}, nil)
		got := Fail("do "+path, admin, err, Hints{sdk.CodeAuth: "check the password"})
		if sdk.CodeOf(got) != want {
			t.Errorf("%s: code %q; want %q (%v)", path, sdk.CodeOf(got), want, got)
		}
		if msg := got.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "Pa55") {
			t.Errorf("%s: %q spans lines or shows the password", path, msg)
		}
	}
	_, err = c.Call(t.Context(), &Endpoint{Base: ep.Base}, Request{Method: "GET", URL: "http://127.0.0.1:1/x"}, nil)
	var te *TransportError
	if !errors.As(err, &te) || Classify(err) != sdk.CodeUnreachable || strings.Contains(err.Error(), "127.0.0.1:1/x\"") {
		t.Errorf("nothing listening: %v (code %s); want a TransportError, unreachable, without the quoted URL", err, Classify(err))
	}
	if Classify(WithCode(sdk.CodeConflict, errors.New("x"))) != sdk.CodeConflict {
		t.Error("WithCode lost its code")
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine([]byte("a\n\tb  c")); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := OneLine([]byte(strings.Repeat("x", 400))); len(got) > 310 {
		t.Errorf("OneLine kept %d bytes", len(got))
	}
}

func TestValidHost(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "::1": true, "es.example": true, "a_b": true, "": false, ":": false, "-a": false, "a/b": false, "a b": false} {
		if ValidHost(h) != want {
			t.Errorf("ValidHost(%q) = %v; want %v", h, !want, want)
		}
	}
}
