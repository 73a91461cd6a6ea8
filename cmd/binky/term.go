package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/state"
)

// style is how a verb may decorate what it writes to one stream: colour
// and live redraws only on a terminal, never when NO_COLOR is set
// (https://no-color.org) or TERM is dumb.
type style struct {
	color bool // ANSI colours
	live  bool // redraw a line in place (the progress spinner)
}

// styleFor decides for f from its kind and the environment.
func styleFor(f *os.File, getenv func(string) string) style {
	tty := isTerminal(f)
	plain := getenv("NO_COLOR") != "" || getenv("TERM") == "dumb"
	return style{color: tty && !plain, live: tty && getenv("TERM") != "dumb"}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

// paint wraps s in code when colours are on.
func (st style) paint(code, s string) string {
	if !st.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// worldColor is the colour of a world's state.
func worldColor(w state.World) string {
	switch w {
	case state.WorldUp:
		return ansiGreen
	case state.WorldFailed:
		return ansiRed
	case state.WorldDown:
		return ansiDim
	}
	return ansiYellow // starting, degraded, stopping, suspended, queued…
}

// serviceColor is the colour of a service's state.
func serviceColor(s state.Service) string {
	switch s {
	case state.ServiceRunning, state.ServiceProvisioned:
		return ansiGreen
	case state.ServiceFailed, state.ServiceLost, state.ServiceExited:
		return ansiRed
	case state.ServiceStopped:
		return ansiDim
	}
	return ansiYellow // starting, unhealthy, backoff, provisioning, stopping
}

// progressPrinter shows progress lines live on w (stderr). On a terminal
// a spinner line below them counts the seconds of the current step, so a
// long health wait or migrate is never silent; elsewhere each step is one
// plain line.
type progressPrinter struct {
	w     io.Writer
	quiet bool
	style style

	mu      sync.Mutex
	cur     api.Progress
	stepAt  time.Time
	drawn   bool
	stop    chan struct{}
	stopped chan struct{}
}

// newProgress builds a printer for stderr.
func newProgress(quiet bool) *progressPrinter {
	return &progressPrinter{w: os.Stderr, quiet: quiet, style: styleFor(os.Stderr, os.Getenv)}
}

func (p *progressPrinter) show(pr api.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, progressLine(pr, p.style))
	if !p.style.live {
		return
	}
	p.cur, p.stepAt = pr, time.Now()
	if p.stop == nil {
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.spin(p.stop, p.stopped)
	}
	p.draw()
}

// done stops the spinner and erases its line; call it when the call ends.
func (p *progressPrinter) done() {
	p.mu.Lock()
	stop, stopped := p.stop, p.stopped
	p.stop = nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-stopped
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spin redraws the spinner until stop closes; it closes stopped. It takes
// the channels rather than reading p's fields, which done clears.
func (p *progressPrinter) spin(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.clear()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// draw writes the spinner line (no newline). The caller holds mu.
func (p *progressPrinter) draw() {
	frame := spinFrames[int(time.Since(p.stepAt)/(100*time.Millisecond))%len(spinFrames)]
	what := p.cur.Step
	if p.cur.Service != "" {
		what += " " + p.cur.Service
	}
	fmt.Fprintf(p.w, "  %s %s %s", p.style.paint(ansiYellow, frame), what, p.style.paint(ansiDim, fmt.Sprintf("%.0fs", time.Since(p.stepAt).Seconds())))
	p.drawn = true
}

// clear erases the spinner line. The caller holds mu.
func (p *progressPrinter) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// progressLine is one step as a line.
func progressLine(pr api.Progress, st style) string {
	who := ""
	if pr.Service != "" {
		who = " " + pr.Service
	}
	msg := ""
	if pr.Message != "" {
		msg = ": " + pr.Message
	}
	return fmt.Sprintf("  %6.1fs  %s%s%s", float64(pr.Elapsed)/1000, st.paint(ansiBold, fmt.Sprintf("%-10s", pr.Step)), who, msg)
}
