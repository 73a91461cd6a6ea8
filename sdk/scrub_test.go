package sdk

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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

func TestIsNetworkError(t *testing.T) {
	_, err := net.Dial("tcp", "127.0.0.1:1")
	if !IsNetworkError(fmt.Errorf("connect: %w", err)) {
		t.Errorf("dial error %v not a network error", err)
	}
	if IsNetworkError(errors.New("syntax error")) {
		t.Errorf("plain error classed as network")
	}
}
