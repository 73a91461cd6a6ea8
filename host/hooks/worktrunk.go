package hooks

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// The commands `binky hook install worktrunk` writes.
const (
	UpCmd   = "binky hook up"
	DownCmd = "binky hook down"
)

// MergeWorktrunk adds binky's hooks to worktrunk's project config
// (.config/wt.toml; in is its content, empty for a new file): `binky hook
// up` as a blocking hook after a worktree is made (pre-start; post-create
// when the file already uses worktrunk's older name) and `binky hook
// down` before one is removed (pre-remove). It adds lines and never
// rewrites one, so comments and every other hook stay; a hook already
// there is left alone. A hook written as a single command string rather
// than a table of named commands is refused: binky would have to rewrite
// it.
func MergeWorktrunk(in []byte, upCmd, downCmd string) ([]byte, bool, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(in), &doc); err != nil {
		return nil, false, fmt.Errorf(".config/wt.toml is not valid TOML: %w", err)
	}
	create := "pre-start"
	if _, has := doc[create]; !has {
		if _, old := doc["post-create"]; old {
			create = "post-create"
		}
	}
	out := append([]byte(nil), in...)
	changed := false
	for _, h := range []struct{ table, cmd, verb string }{
		{create, upCmd, "hook up"},
		{"pre-remove", downCmd, "hook down"},
	} {
		v, has := doc[h.table]
		switch t := v.(type) {
		case nil:
			if has {
				return nil, false, fmt.Errorf(".config/wt.toml: %s is empty", h.table)
			}
			if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			if len(out) > 0 {
				out = append(out, '\n')
			}
			out = append(out, fmt.Sprintf("[%s]\nbinky = %q\n", h.table, h.cmd)...)
			changed = true
		case map[string]any:
			ours := false
			for _, c := range t {
				if s, ok := c.(string); ok && strings.Contains(s, h.verb) {
					ours = true
				}
			}
			if ours {
				continue
			}
			key := "binky"
			for i := 2; t[key] != nil; i++ {
				key = fmt.Sprintf("binky%d", i)
			}
			line := fmt.Sprintf("%s = %q\n", key, h.cmd)
			hdr := regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*"?` + regexp.QuoteMeta(h.table) + `"?[ \t]*\][ \t]*(#.*)?(\r?\n|$)`)
			loc := hdr.FindIndex(out)
			if loc == nil {
				return nil, false, fmt.Errorf(".config/wt.toml: %s is written in a form binky does not edit (an inline or dotted table); add %s = %q to it by hand", h.table, key, h.cmd)
			}
			at := loc[1]
			ins := line
			if at == len(out) && !bytes.HasSuffix(out, []byte("\n")) {
				ins = "\n" + line
			}
			out = append(out[:at:at], append([]byte(ins), out[at:]...)...)
			changed = true
		case string:
			if strings.Contains(t, h.verb) {
				continue
			}
			return nil, false, fmt.Errorf(".config/wt.toml: %s is one command (%q); make it a table of named commands, e.g.\n[%s]\nyours = %q\nbinky = %q", h.table, t, h.table, t, h.cmd)
		default:
			return nil, false, fmt.Errorf(".config/wt.toml: %s is a %T, not a table of commands", h.table, v)
		}
	}
	if !changed {
		return in, false, nil
	}
	var check map[string]any
	if _, err := toml.Decode(string(out), &check); err != nil {
		return nil, false, fmt.Errorf("adding binky's hooks to .config/wt.toml would break it (%v); add them by hand", err)
	}
	return out, true, nil
}
