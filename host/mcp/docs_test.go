package mcp

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// numberWords spell the counts docs/mcp.md may give in words.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

// TestDocsListEveryTool keeps docs/mcp.md true to the tools the server
// registers (it said "seven tools" when there were ten; issue 40): the
// opening sentence's list and the table under "## Tools" name exactly the
// tools tools/list answers with, every "N tools" in the page counts them,
// and so does the error refusing a long tool name.
func TestDocsListEveryTool(t *testing.T) {
	data, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatalf("read docs/mcp.md: %v", err)
	}
	doc := string(data)
	s := startSession(t, &fakeDaemon{})
	defer s.close()
	m, _ := s.request("tools/list", map[string]any{})
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, tool := range res.Tools {
		registered = append(registered, tool.Name)
	}
	slices.Sort(registered)
	same := func(where string, got []string) {
		t.Helper()
		got = slices.Clone(got)
		slices.Sort(got)
		if !slices.Equal(got, registered) {
			t.Errorf("docs/mcp.md %s lists %v; the server registers %v", where, got, registered)
		}
	}
	backticked := regexp.MustCompile("`([a-z_]+)`")

	intro := regexp.MustCompile(`(?s)It offers (\w+)\s+tools — (.*?) — `).FindStringSubmatch(doc)
	if intro == nil {
		t.Fatal(`docs/mcp.md has no opening "It offers N tools — ` + "`a`, `b`" + ` — "`)
	}
	var listed []string
	for _, b := range backticked.FindAllStringSubmatch(intro[2], -1) {
		listed = append(listed, b[1])
	}
	same("in its opening sentence", listed)

	var rows []string
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\|")
	_, table, ok := strings.Cut(doc, "\n| tool | arguments | does |\n")
	if !ok {
		t.Fatal(`docs/mcp.md has no table headed "| tool | arguments | does |"`)
	}
	for _, line := range strings.Split(table, "\n")[1:] { // after the |---| line
		if !strings.HasPrefix(line, "|") {
			break
		}
		if r := row.FindStringSubmatch(line); r != nil {
			rows = append(rows, r[1])
		}
	}
	same("in its Tools table", rows)

	count := regexp.MustCompile(`(?i)\b(\d+|` + strings.Join(numberWords, "|") + `)\s+tools\b`)
	counts := count.FindAllStringSubmatch(doc, -1)
	if len(counts) == 0 {
		t.Error(`docs/mcp.md never says how many tools there are ("N tools")`)
	}
	for _, c := range counts {
		n, err := strconv.Atoi(c[1])
		if err != nil {
			n = slices.Index(numberWords, strings.ToLower(c[1]))
		}
		if n != len(registered) {
			t.Errorf("docs/mcp.md says %q; the server registers %d tools", strings.Join(strings.Fields(c[0]), " "), len(registered))
		}
	}

	refusal := refuseLongToolName(t.Context(), nil, json.RawMessage(`{"method":"tools/call","params":{"name":"`+strings.Repeat("x", echoBytes+1)+`"}}`))
	if refusal == nil {
		t.Fatal("a tool name longer than echoBytes was not refused")
	}
	for _, name := range registered {
		if !strings.Contains(refusal.Error(), " "+name) {
			t.Errorf("the refusal of a long tool name %q does not name the tool %s", refusal, name)
		}
	}
}
