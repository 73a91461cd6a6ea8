package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// MaxPayload bounds a hook payload read from stdin: Claude Code's are a
// few hundred bytes.
const MaxPayload = 1 << 20

// ClaudeCreate is the JSON Claude Code writes on a WorktreeCreate hook's
// stdin. Claude Code builds have sent the worktree's name as "name" and as
// "worktree_name", and some a directory ("base_path") or a whole path
// ("worktree_path"); all are read, the rest ignored.
type ClaudeCreate struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Name           string `json:"name"`
	WorktreeName   string `json:"worktree_name"`
	BasePath       string `json:"base_path"`
	WorktreePath   string `json:"worktree_path"`
	// The ref to start a new branch from, under the names builds used.
	SourceRef  string `json:"source_ref"`
	BaseCommit string `json:"base_commit"`
	BaseRef    string `json:"base_ref"`
}

// ClaudeRemove is the JSON on a WorktreeRemove hook's stdin.
type ClaudeRemove struct {
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
	WorktreePath  string `json:"worktree_path"`
}

// readPayload decodes one JSON object of at most MaxPayload bytes.
func readPayload(r io.Reader, event string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return fmt.Errorf("read the %s payload from stdin: %w", event, err)
	}
	if len(b) > MaxPayload {
		return fmt.Errorf("the %s payload on stdin is over %d bytes; a Claude Code payload is a small JSON object", event, MaxPayload)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("no %s payload on stdin: Claude Code writes a JSON object there (is this command run by a Claude Code hook?)", event)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read the %s payload (%d bytes): it is not the JSON object Claude Code writes: %w", event, len(b), err)
	}
	return nil
}

// ParseClaudeCreate reads a WorktreeCreate payload and checks it names a
// worktree.
func ParseClaudeCreate(r io.Reader) (ClaudeCreate, error) {
	var c ClaudeCreate
	if err := readPayload(r, "WorktreeCreate", &c); err != nil {
		return c, err
	}
	if c.HookEventName != "" && c.HookEventName != "WorktreeCreate" {
		return c, fmt.Errorf("the payload is for %q; binky hook claude create answers WorktreeCreate", c.HookEventName)
	}
	name := c.WorktreeName
	if name == "" {
		name = c.Name
	}
	if name == "" && c.WorktreePath != "" {
		name = filepath.Base(filepath.Clean(c.WorktreePath))
	}
	if err := checkName(name); err != nil {
		return c, err
	}
	c.Name = name
	if c.WorktreePath != "" && !filepath.IsAbs(c.WorktreePath) {
		return c, fmt.Errorf("the payload's worktree_path %q is not absolute", c.WorktreePath)
	}
	return c, nil
}

// checkName refuses a worktree name that is not one plain path segment.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the WorktreeCreate payload names no worktree (neither name nor worktree_name)")
	case len(name) > 200:
		return fmt.Errorf("the worktree name in the payload is %d bytes; at most 200", len(name))
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") || strings.HasPrefix(name, "-"):
		return fmt.Errorf("the worktree name %q is not one plain directory name", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("the worktree name %q holds a control character", name)
		}
	}
	return nil
}

// Path is where the worktree goes: the payload's worktree_path, else
// <base_path>/<name>, else Claude Code's own place for it,
// <project>/.claude/worktrees/<name>.
func (c ClaudeCreate) Path(project string) string {
	switch {
	case c.WorktreePath != "":
		return filepath.Clean(c.WorktreePath)
	case c.BasePath != "" && filepath.IsAbs(c.BasePath):
		return filepath.Join(c.BasePath, c.Name)
	}
	return filepath.Join(project, ".claude", "worktrees", c.Name)
}

// Branch is the branch Claude Code itself would make for the worktree:
// worktree-<name>.
func (c ClaudeCreate) Branch() string { return "worktree-" + c.Name }

// Base is the ref a new branch starts from; "" means HEAD.
func (c ClaudeCreate) Base() string {
	for _, r := range []string{c.SourceRef, c.BaseCommit, c.BaseRef} {
		if r != "" {
			return r
		}
	}
	return ""
}

// ParseClaudeRemove reads a WorktreeRemove payload and checks it names an
// absolute worktree path.
func ParseClaudeRemove(r io.Reader) (ClaudeRemove, error) {
	var c ClaudeRemove
	if err := readPayload(r, "WorktreeRemove", &c); err != nil {
		return c, err
	}
	if c.HookEventName != "" && c.HookEventName != "WorktreeRemove" {
		return c, fmt.Errorf("the payload is for %q; binky hook claude remove answers WorktreeRemove", c.HookEventName)
	}
	if c.WorktreePath == "" || !filepath.IsAbs(c.WorktreePath) || strings.ContainsRune(c.WorktreePath, 0) {
		return c, fmt.Errorf("the WorktreeRemove payload's worktree_path %q is not an absolute path", c.WorktreePath)
	}
	c.WorktreePath = filepath.Clean(c.WorktreePath)
	return c, nil
}
