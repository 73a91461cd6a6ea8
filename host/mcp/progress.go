package mcp

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/binkyhq/binky/host/api"
)

// outputEvery bounds how often streamed command output becomes a progress
// notification: a command flooding its output must not flood the client.
const outputEvery = 250 * time.Millisecond

// progress sends notifications/progress for one tool call that carried a
// progressToken; without a token every method is a no-op.
type progress struct {
	notify func(method string, params any) error
	token  mcpgo.ProgressToken
	log    hclog.Logger
	// scrub, when set, bounds the echoes of long arguments (Server.scrubber).
	scrub func(string) string

	mu      sync.Mutex
	count   float64
	lastOut time.Time
}

func newProgress(notify func(string, any) error, req mcpgo.CallToolRequest, log hclog.Logger) *progress {
	p := &progress{notify: notify, log: log}
	if req.Params.Meta != nil {
		p.token = req.Params.Meta.ProgressToken
	}
	return p
}

// progress is newProgress for one of s's tool calls: its messages repeat
// no long argument whole, as its result does not.
func (s *Server) progress(req mcpgo.CallToolRequest) *progress {
	p := newProgress(s.notify, req, s.log)
	if p.token != nil {
		p.scrub = s.scrubber(req)
	}
	return p
}

// step reports one daemon progress frame.
func (p *progress) step(pr api.Progress) {
	msg := pr.Step
	if pr.Service != "" {
		msg += " " + pr.Service
	}
	if pr.Message != "" {
		msg += ": " + pr.Message
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sendLocked(msg)
}

// output notes a chunk of a verify command's output; its last line is
// reported at most every outputEvery.
func (p *progress) output(check int, data string) {
	line := lastLine(data)
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.lastOut) < outputEvery {
		return
	}
	p.lastOut = time.Now()
	p.sendLocked(fmt.Sprintf("check %d: %s", check+1, line))
}

func (p *progress) sendLocked(msg string) {
	if p.token == nil || p.notify == nil {
		return
	}
	if p.scrub != nil {
		msg = p.scrub(msg)
	}
	if len(msg) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	p.count++
	err := p.notify(string(mcpgo.MethodNotificationProgress), map[string]any{
		"progressToken": p.token,
		"progress":      p.count,
		"message":       msg,
	})
	if err != nil && p.log != nil {
		p.log.Debug("progress notification not sent", "error", err)
	}
}

// lastLine is the last non-blank line of data, trimmed of control noise.
func lastLine(data string) string {
	data = strings.TrimRight(data, "\r\n \t")
	if i := strings.LastIndexAny(data, "\r\n"); i >= 0 {
		data = data[i+1:]
	}
	return strings.TrimSpace(data)
}

// tailBytes is how much output each verify check keeps for the result;
// tailsBudget bounds them all together, so a run of many checks still
// fits a reply (maxResultJSON): each keeps tailsBudget/checks, at least
// minTailBytes.
const (
	tailBytes    = 4 << 10
	tailsBudget  = 64 << 10
	minTailBytes = 512
)

// tailLimit is how much output each of n checks keeps in the result.
func tailLimit(n int) int {
	if n <= 0 || tailsBudget/n >= tailBytes {
		return tailBytes
	}
	return max(tailsBudget/n, minTailBytes)
}

// tails keeps the last tailBytes of each check's output.
type tails struct {
	mu    sync.Mutex
	byIdx map[int]*tail
}

type tail struct {
	buf       []byte
	truncated bool
}

func (t *tails) add(check int, data string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byIdx == nil {
		t.byIdx = map[int]*tail{}
	}
	tl := t.byIdx[check]
	if tl == nil {
		tl = &tail{}
		t.byIdx[check] = tl
	}
	tl.buf = append(tl.buf, data...)
	if len(tl.buf) > 2*tailBytes { // compact now and then, not on every chunk
		tl.buf = append(tl.buf[:0], tl.buf[len(tl.buf)-tailBytes:]...)
		tl.truncated = true
	}
}

// get returns the last limit bytes (at most tailBytes) of check's kept
// output, starting on a whole UTF-8 character (and on a line when one
// starts near the cut).
func (t *tails) get(check, limit int) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tl := t.byIdx[check]
	if tl == nil {
		return "", false
	}
	b, truncated := tl.buf, tl.truncated
	limit = min(limit, tailBytes)
	if len(b) > limit {
		b, truncated = b[len(b)-limit:], true
	}
	if truncated {
		for len(b) > 0 && b[0]&0xC0 == 0x80 { // continuation byte
			b = b[1:]
		}
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < 200 && i+1 < len(b) {
			b = b[i+1:]
		}
	}
	return string(b), truncated
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
