package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ctxWaker blocks in Wake until its ctx ends, and reports that.
type ctxWaker struct {
	entered chan struct{}
	ended   chan error
}

func (c *ctxWaker) Wakeable(string, string) bool { return true }
func (c *ctxWaker) Touch(string, string)         {}
func (c *ctxWaker) Wake(ctx context.Context, _, _ string) error {
	close(c.entered)
	<-ctx.Done()
	c.ended <- ctx.Err()
	return ctx.Err()
}

// A wake whose only client has gone is abandoned at once (its ctx ends),
// so it leaves the admission queue instead of holding it for 10 minutes
// (issue 29).
func TestWakeAbandonedWhenItsClientGoes(t *testing.T) {
	cw := &ctxWaker{entered: make(chan struct{}), ended: make(chan error, 1)}
	p := startProxy(t, Options{Waker: cw, WakeTimeout: waitLimit})
	p.Set([]Route{{Host: "web.w1.acme.localhost", Target: "127.0.0.1:1", State: StateSuspended, Project: "acme", Worktree: "w1", Service: "web"}})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.testAddr()+"/", nil)
	req.Host = "web.w1.acme.localhost"
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-cw.entered
	select {
	case err := <-cw.ended:
		t.Fatalf("the wake ended (%v) while its client still waited", err)
	default:
	}
	cancel() // the client gives up
	<-errc
	select {
	case err := <-cw.ended:
		if err == nil {
			t.Fatal("wake ended without its ctx ending")
		}
	case <-time.After(waitLimit):
		t.Fatal("the abandoned wake still runs")
	}
}

// noteWaker is a fakeWaker that says why the world is not running.
type noteWaker struct{ *fakeWaker }

func (noteWaker) WakeNote(string, string) string {
	return "suspended to relieve memory pressure; it resumes when free RAM is back above the 20% reserve"
}

// The page for a world suspended under pressure says so, not "starting".
func TestWakePageSaysWhySuspended(t *testing.T) {
	p, fw := wakeSetup(t, true)
	fw.release = make(chan struct{})
	defer close(fw.release)
	p.opts.Waker = noteWaker{fw}
	req, _ := http.NewRequest("GET", "http://"+p.testAddr()+"/", nil)
	req.Host = "web.w1.acme.localhost"
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if body := string(b); !strings.Contains(body, "suspended to relieve memory pressure; it resumes when free RAM is back above the 20% reserve") || strings.Contains(body, "still starting") {
		t.Errorf("page %.400q; want the suspension named", body)
	}
}
