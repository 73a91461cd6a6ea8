package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The bounds on what a call takes and what a reply carries (docs/mcp.md,
// "Bounds"). An agent's context is small, and an argument is the client's
// input: no reply grows with it.
const (
	// maxArgsBytes bounds a call's whole arguments object, as JSON.
	maxArgsBytes = 16 << 10
	// maxNameArg bounds branch, worktree, project, service and grep;
	// maxRepoArg bounds repo, a path (PATH_MAX).
	maxNameArg = 1 << 10
	maxRepoArg = 4 << 10

	// echoBytes is how much of an argument a reply ever repeats: its
	// first echoBytes bytes, then "… (N bytes)".
	echoBytes = 200

	// maxSummaryBytes bounds a result's one-line summary; maxResultJSON
	// bounds its JSON (the second text content, and the same value as
	// structuredContent).
	maxSummaryBytes = 4 << 10
	maxResultJSON   = 128 << 10

	// maxProtocolError bounds the message of a JSON-RPC error (an unknown
	// tool or method, which the protocol library names as it was sent).
	maxProtocolError = 512
)

// argLimit is the most bytes the named string argument may hold.
func argLimit(name string) int {
	switch name {
	case "repo":
		return maxRepoArg
	case "command":
		return maxCommandArg
	}
	return maxNameArg
}

// cutAt is the largest index <= n at which s may be cut on a whole UTF-8
// character.
func cutAt(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// elide is s when it is at most echoBytes long, else its first echoBytes
// bytes and "… (N bytes)", N being the length of all of s.
func elide(s string) string {
	if len(s) <= echoBytes {
		return s
	}
	return s[:cutAt(s, echoBytes)] + fmt.Sprintf("… (%d bytes)", len(s))
}

// quoteArg is an argument as a message quotes it (%q), never longer than
// its first echoBytes bytes and its size.
func quoteArg(s string) string {
	if len(s) <= echoBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s, echoBytes)]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// tooBig is the refusal of an argument over its bound: it names the
// argument and the sizes, never the value.
func tooBig(tool, name string, size, limit int) error {
	return fmt.Errorf("%s argument %q is %d bytes; it takes at most %d (a %s is never that long)", tool, name, size, limit, argNoun(name))
}

func argNoun(name string) string {
	switch name {
	case "repo":
		return "directory path"
	case "grep":
		return "log search expression"
	case "branch":
		return "branch name"
	case "service":
		return "service name"
	case "project":
		return "project name"
	}
	return "worktree name or branch"
}

// longArgs are the call's argument names and string values longer than
// echoBytes, longest first: a reply repeats none of them whole.
func longArgs(req mcpgo.CallToolRequest) []string {
	raw, err := rawArguments(req)
	if err != nil || len(raw) <= echoBytes {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var long []string
	for k, v := range m {
		if len(k) > echoBytes {
			long = append(long, k)
		}
		var s string
		if len(v) > echoBytes && json.Unmarshal(v, &s) == nil && len(s) > echoBytes {
			long = append(long, s)
		}
	}
	sort.Slice(long, func(i, j int) bool { return len(long[i]) > len(long[j]) })
	return long
}

// echoForms are the ways a message may quote argument v, each with what
// replaces it: v as it is, as %q quotes it, and (for repo) as the
// directory the server made of it. For a v past every argument bound
// (bind refused it, so only bind's own message could quote it) the forms
// are of its start only.
func (s *Server) echoForms(v string) [][2]string {
	size := len(v)
	if limit := 2 * maxRepoArg; size > limit {
		v = v[:cutAt(v, limit)]
	}
	bounded := func(form string) string {
		return form[:cutAt(form, echoBytes)] + fmt.Sprintf("… (%d bytes)", size)
	}
	forms := [][2]string{{v, bounded(v)}}
	if q := strconv.Quote(v); q[1:len(q)-1] != v {
		forms = append(forms, [2]string{q[1 : len(q)-1], bounded(q[1 : len(q)-1])})
	}
	if d := s.dir(v); d != v && len(d) > echoBytes {
		forms = append(forms, [2]string{d, bounded(d)})
	}
	return forms
}

// scrubber replaces every echo of a long argument that repeats more than
// its first echoBytes bytes (whole, or cut short by whoever quoted it) by
// those bytes and the argument's size; nil when the call has no long
// argument.
func (s *Server) scrubber(req mcpgo.CallToolRequest) func(string) string {
	long := longArgs(req)
	if len(long) == 0 {
		return nil
	}
	var forms [][2]string
	for _, v := range long {
		forms = append(forms, s.echoForms(v)...)
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i][0]) > len(forms[j][0]) })
	return func(text string) string {
		for _, f := range forms {
			text = scrubEcho(text, f[0], f[1])
		}
		return text
	}
}

// scrubEcho replaces, in text, each run that starts with more than
// echoBytes bytes of form and goes on agreeing with it, by bounded.
func scrubEcho(text, form, bounded string) string {
	if len(form) <= echoBytes || len(text) <= echoBytes {
		return text
	}
	head := form[:echoBytes+1]
	var b strings.Builder
	for {
		i := strings.Index(text, head)
		if i < 0 {
			if b.Len() == 0 {
				return text
			}
			b.WriteString(text)
			return b.String()
		}
		n := len(head)
		for n < len(form) && i+n < len(text) && text[i+n] == form[n] {
			n++
		}
		b.WriteString(text[:i])
		b.WriteString(bounded)
		text = text[i+n:]
	}
}

// scrubResult rewrites res so that it repeats no long argument of the call
// beyond its first echoBytes bytes. A daemon message, a summary or a field
// may quote an argument; this is the one place that catches them all.
func scrubResult(res *mcpgo.CallToolResult, scrub func(string) string) *mcpgo.CallToolResult {
	if res == nil || scrub == nil || len(res.Content) != 2 {
		return res
	}
	summary, ok := res.Content[0].(mcpgo.TextContent)
	body, ok2 := res.Content[1].(mcpgo.TextContent)
	if !ok || !ok2 {
		return res
	}
	v, err := decodeJSON([]byte(body.Text))
	if err != nil {
		return res
	}
	return build(scrub(summary.Text), walkStrings(v, "", func(_ string, s string) string { return scrub(s) }), res.IsError)
}

// result builds a tool result: the one-line summary first, then the same
// structured value as JSON text, with structuredContent for clients that
// read it. Both are bounded (maxSummaryBytes, maxResultJSON).
func result(summary string, structured any, isError bool) *mcpgo.CallToolResult {
	return build(summary, structured, isError)
}

func build(summary string, structured any, isError bool) *mcpgo.CallToolResult {
	b, err := json.Marshal(structured)
	if err != nil {
		b = fmt.Appendf(nil, `{"error":{"code":"internal","message":%q}}`, "encode result: "+err.Error())
	}
	if len(b) > maxResultJSON {
		b = shrinkJSON(b)
	}
	return &mcpgo.CallToolResult{
		Content: []mcpgo.Content{
			mcpgo.NewTextContent(boundSummary(oneLine(summary))),
			mcpgo.NewTextContent(string(b)),
		},
		StructuredContent: json.RawMessage(b),
		IsError:           isError,
	}
}

// boundSummary cuts a summary longer than maxSummaryBytes, saying so.
func boundSummary(s string) string {
	if len(s) <= maxSummaryBytes {
		return s
	}
	note := fmt.Sprintf("… (summary cut: %d bytes; the JSON content has the result)", len(s))
	return s[:cutAt(s, maxSummaryBytes-len(note))] + note
}

// Truncation says a result's JSON was cut to fit maxResultJSON: it is the
// "reply_truncated" field of the structured content.
type Truncation struct {
	// Bytes is the size of the whole result's JSON; Limit the bound.
	Bytes int `json:"bytes"`
	Limit int `json:"limit"`
	// StringsCutTo: strings longer than this many bytes were cut (each
	// ends, or for output_tail starts, with "… (N bytes)").
	StringsCutTo int `json:"strings_cut_to,omitempty"`
	// ArraysCutTo: arrays longer than this kept their first items only.
	ArraysCutTo int `json:"arrays_cut_to,omitempty"`
}

// shrinkJSON cuts an oversized result until it fits maxResultJSON: long
// strings first, then long arrays, and as a last resort the result is
// only the note that it was cut. The result stays an object with the same
// fields, plus reply_truncated.
func shrinkJSON(b []byte) []byte {
	v, err := decodeJSON(b)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return mustJSON(map[string]any{"reply_truncated": Truncation{Bytes: len(b), Limit: maxResultJSON}})
	}
	fits := func(t Truncation, val any) ([]byte, bool) {
		m := val.(map[string]any)
		m["reply_truncated"] = t
		out := mustJSON(m)
		return out, len(out) <= maxResultJSON
	}
	for _, n := range []int{16 << 10, 4 << 10, 1 << 10, 256} {
		if out, ok := fits(Truncation{Bytes: len(b), Limit: maxResultJSON, StringsCutTo: n}, capStrings(obj, n)); ok {
			return out
		}
	}
	for _, items := range []int{256, 64, 16, 4, 1} {
		if out, ok := fits(Truncation{Bytes: len(b), Limit: maxResultJSON, StringsCutTo: 256, ArraysCutTo: items}, capArrays(capStrings(obj, 256), items)); ok {
			return out
		}
	}
	return mustJSON(map[string]any{"reply_truncated": Truncation{Bytes: len(b), Limit: maxResultJSON}})
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Appendf(nil, `{"error":{"code":"internal","message":%q}}`, "encode result: "+err.Error())
	}
	return b
}

// walkStrings copies v with every string value (not key) passed through
// f, which also learns the key the string is under.
func walkStrings(v any, key string, f func(key, s string) string) any {
	switch x := v.(type) {
	case string:
		return f(key, x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walkStrings(e, k, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walkStrings(e, key, f)
		}
		return out
	}
	return v
}

// capStrings cuts every string longer than n bytes; an output_tail keeps
// its end (the end of a command's output is what tells), the rest their
// start.
func capStrings(v any, n int) any {
	return walkStrings(v, "", func(key, s string) string {
		if len(s) <= n {
			return s
		}
		if key == "output_tail" {
			i := len(s) - n
			for i < len(s) && !utf8.RuneStart(s[i]) {
				i++
			}
			return fmt.Sprintf("(%d bytes) …", len(s)) + s[i:]
		}
		return s[:cutAt(s, n)] + fmt.Sprintf("… (%d bytes)", len(s))
	})
}

// capArrays keeps the first n items of every array.
func capArrays(v any, n int) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = capArrays(e, n)
		}
		return out
	case []any:
		if len(x) > n {
			x = x[:n]
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = capArrays(e, n)
		}
		return out
	}
	return v
}

// boundProtocolErrors wraps the protocol stream: a JSON-RPC error whose
// message is longer than maxProtocolError (the protocol library quoting a
// tool or method name as the client sent it) is written with the message
// cut to its first echoBytes bytes and its size, and without data.
// Everything else passes unchanged.
func boundProtocolError(p []byte) []byte {
	if len(p) <= maxProtocolError {
		return p
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(p, &m) != nil || m.Error == nil || m.Method != "" {
		return p
	}
	if len(m.Error.Message) <= maxProtocolError && len(m.Error.Data) <= maxProtocolError {
		return p
	}
	m.Error.Message = elide(m.Error.Message)
	if len(m.Error.Data) > maxProtocolError {
		m.Error.Data = nil
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Error   any             `json:"error"`
	}{m.JSONRPC, m.ID, m.Error})
	if err != nil {
		return p
	}
	return append(out, '\n')
}

// refuseLongToolName is a request hook: a tools/call naming a tool longer
// than echoBytes (no tool's name is) is refused here, naming the tools,
// before the protocol library would quote the whole name back.
func refuseLongToolName(_ context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || len(raw) <= echoBytes {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != string(mcpgo.MethodToolsCall) || len(m.Params.Name) <= echoBytes {
		return nil
	}
	names := toolNames()
	return fmt.Errorf("no tool named %s: binky's tools are %s and %s",
		quoteArg(m.Params.Name), strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
