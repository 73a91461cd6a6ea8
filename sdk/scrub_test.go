package sdk

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestScrubURL(t *testing.T) {
	u, _ := url.Parse("postgres://me:p%40ss%2Fw@h/db?password=q%26r")
	got := ScrubURL("failed: p@ss/w and p%40ss%2Fw and q&r and q%26r, other", u)
	if want := "failed: xxxxx and xxxxx and xxxxx and xxxxx, other"; got != want {
		t.Errorf("ScrubURL = %q; want %q", got, want)
	}
	if got := ScrubURL("nothing", nil); got != "nothing" {
		t.Errorf("ScrubURL(nil) = %q", got)
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		msg, pw, want string
	}{
		{"no secret here", "hunter22", "no secret here"},
		{"pw hunter22 twice hunter22", "hunter22", "pw xxxxx twice xxxxx"},
		{`invalid port ":S3cr3t-PgPw" after host`, "S3cr3t-PgPw/x", `invalid port ":xxxxx" after host`},
		{`path "/x@db.local/db"`, "S3cr3t-PgPw/x", `path "/x@db.local/db"`},
		{`parse "postgres://u:a\"b\\c@h/": bad`, `a"b\c`, `parse "postgres://u:xxxxx@h/": bad`},
		{"short pw ab and ab", "ab", "short pw xxxxx and xxxxx"},
		{"piece hunt but not hun", "hunter22", "piece xxxxx but not hun"},
		{"userinfo p;ss%2Fword", "p;ss/word", "userinfo xxxxx"},
	} {
		if got := Scrub(tc.msg, tc.pw); got != tc.want {
			t.Errorf("Scrub(%q, %q) = %q; want %q", tc.msg, tc.pw, got, tc.want)
		}
	}
}

// TestScrubURLError: a *url.Error quotes the whole URL with %q, and its
// inner error quotes a piece; neither survives ScrubAdmin.
func TestScrubURLError(t *testing.T) {
	raw := "postgres://postgres:S3cr3t-PgPw/9#x@db.local:5432/app"
	//lint:ignore SA1007 the URL is invalid on purpose: the test needs its parse error
	_, err := url.Parse(raw)
	if err == nil {
		t.Fatal("url.Parse accepted the URL; the test needs a parse error")
	}
	var ue *url.Error
	for _, msg := range []string{err.Error(), fmt.Errorf("wrapped: %w", err).Error()} {
		got := ScrubAdmin(msg, raw)
		if strings.Contains(got, "S3cr") || strings.Contains(got, "PgPw") {
			t.Errorf("ScrubAdmin(%q) = %q; still holds a piece of the password", msg, got)
		}
	}
	if errors.As(err, &ue) {
		if got := ScrubAdmin(ue.Err.Error(), raw); strings.Contains(got, "S3cr3t") {
			t.Errorf("ScrubAdmin(%q) = %q", ue.Err, got)
		}
	}
}

func TestAdminPasswords(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{"postgres://postgres@127.0.0.1:5432/postgres", nil},
		{"postgres://u:p%40ss@h/db", []string{"p@ss", "p%40ss"}},
		{"postgres://u:S3cr/et@h/db", []string{"S3cr/et"}},
		{"u:pw@tcp(127.0.0.1:3306)/", []string{"pw"}},
		{"postgres://h/db?password=a%26b&x=1", []string{"a&b", "a%26b", "a&b"}},
	} {
		got := AdminPasswords(tc.raw)
		if !slices.Equal(got, tc.want) {
			t.Errorf("AdminPasswords(%q) = %q; want %q", tc.raw, got, tc.want)
		}
	}
}

func TestIsNetworkError(t *testing.T) {
	_, err := net.Dial("tcp", "127.0.0.1:1")
	if !IsNetworkError(fmt.Errorf("connect: %w", err)) {
		t.Errorf("dial error %v not a network error", err)
	}
	if IsNetworkError(errors.New("syntax error")) {
		t.Errorf("plain error classed as network")
	}
}
