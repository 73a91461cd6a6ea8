package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The commands `binky hook install claude` writes.
const (
	ClaudeCreateCmd = "binky hook claude create"
	ClaudeRemoveCmd = "binky hook claude remove"
)

// Seconds Claude Code gives each hook before it kills it (its default is
// a minute): bringing a world up can build a golden database first.
const (
	ClaudeCreateTimeout = 600
	ClaudeRemoveTimeout = 300
)

// member is one key of a JSON object, in file order.
type member struct {
	key string
	val json.RawMessage
}

// object reads a JSON object keeping its keys' order; empty input is {}.
func object(b []byte, what string) ([]member, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s is not JSON: %w", what, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: the value of %q is not JSON: %w", what, key, err)
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s holds more than one JSON value", what)
	}
	return out, nil
}

func encode(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func get(ms []member, key string) (json.RawMessage, int) {
	for i, m := range ms {
		if m.key == key {
			return m.val, i
		}
	}
	return nil, -1
}

// hookGroup is one entry of a Claude Code hook event's list.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// ErrOtherHook says an event already has a hook that is not binky's.
var ErrOtherHook = errors.New("another hook is configured")

// MergeClaudeSettings adds binky's WorktreeCreate and WorktreeRemove hooks
// to the .claude/settings.json content in (empty for a new file), keeping
// every other key, hook and the keys' order. It reports whether anything
// changed. An event that already has a hook of its own is refused
// (ErrOtherHook): a WorktreeCreate hook replaces Claude Code's git
// worktree add, and two would make two worktrees.
func MergeClaudeSettings(in []byte, createCmd, removeCmd string) ([]byte, bool, error) {
	top, err := object(in, ".claude/settings.json")
	if err != nil {
		return nil, false, err
	}
	rawHooks, hi := get(top, "hooks")
	var events []member
	if hi >= 0 && !bytes.Equal(bytes.TrimSpace(rawHooks), []byte("null")) {
		if events, err = object(rawHooks, `.claude/settings.json "hooks"`); err != nil {
			return nil, false, err
		}
	}
	changed := false
	for _, ev := range []struct {
		name, cmd, verb string
		timeout         int
	}{
		{"WorktreeCreate", createCmd, "claude create", ClaudeCreateTimeout},
		{"WorktreeRemove", removeCmd, "claude remove", ClaudeRemoveTimeout},
	} {
		raw, ei := get(events, ev.name)
		var groups []hookGroup
		if ei >= 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, false, fmt.Errorf(`.claude/settings.json: hooks.%s is not a list of {"hooks": [...]} entries: %w`, ev.name, err)
			}
		}
		ours, others := false, []string{}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if strings.Contains(h.Command, "hook "+ev.verb) {
					ours = true
				} else {
					others = append(others, h.Command)
				}
			}
		}
		if len(others) > 0 {
			return nil, false, fmt.Errorf("%w: .claude/settings.json already has a %s hook (%s); it replaces Claude Code's own worktree handling as binky's would, so binky leaves the file as it is: call `binky hook up` (or `binky hook down`) from that hook instead", ErrOtherHook, ev.name, strings.Join(others, "; "))
		}
		if ours {
			continue
		}
		groups = append(groups, hookGroup{Hooks: []hookCommand{{Type: "command", Command: ev.cmd, Timeout: ev.timeout}}})
		b, err := json.Marshal(groups)
		if err != nil {
			return nil, false, err
		}
		if ei >= 0 {
			events[ei].val = b
		} else {
			events = append(events, member{ev.name, b})
		}
		changed = true
	}
	if !changed {
		return in, false, nil
	}
	if hi >= 0 {
		top[hi].val = encode(events)
	} else {
		top = append(top, member{"hooks", encode(events)})
	}
	var out bytes.Buffer
	if err := json.Indent(&out, encode(top), "", "  "); err != nil {
		return nil, false, err
	}
	out.WriteByte('\n')
	return out.Bytes(), true, nil
}
