package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const limitsHead = "[project]\nname = \"a\"\n[services.x]\nadapter = \"y\"\n"

// nestedInline is the issue's `env = {a={a={…}}}`, depth levels deep.
func nestedInline(depth int) string {
	return "env = " + strings.Repeat("{a=", depth) + "1" + strings.Repeat("}", depth) + "\n"
}

// TestLimitsRefuseDeep: input nested past MaxDepth in any of TOML's ways
// is refused before decoding, with the file and line of the first level too
// many.
func TestLimitsRefuseDeep(t *testing.T) {
	t.Parallel()
	parts := func(n int) string { return strings.TrimSuffix(strings.Repeat("a.", n), ".") }
	tests := []struct {
		name string
		src  string
		line int
	}{
		{"inline tables 4,000 deep (16 KB)", limitsHead + nestedInline(4000), 5},
		{"inline tables 50,000 deep", limitsHead + nestedInline(50000), 5},
		{"arrays 250,000 deep", limitsHead + "config = { v = " + strings.Repeat("[", 250000) + strings.Repeat("]", 250000) + " }\n", 5},
		{"arrays of inline tables", limitsHead + "config = " + strings.Repeat("[{a=", 2000) + strings.Repeat("}]", 2000) + "\n", 5},
		{"dotted key", limitsHead + "\n" + parts(20000) + " = 1\n", 6},
		{"dotted keys in inline tables", limitsHead + "config = " + strings.Repeat("{a.b.c=", 1000) + "1" + strings.Repeat("}", 1000) + "\n", 5},
		{"table header", limitsHead + "[" + parts(20000) + "]\n", 5},
		{"array of tables header", limitsHead + "[[" + parts(20000) + "]]\n", 5},
		{"under a deep table", limitsHead + "[" + parts(MaxDepth-1) + "]\nx.y = 1\n", 6},
		{"spread over lines", limitsHead + "config = [\n" + strings.Repeat("[ # c\n", 40) + strings.Repeat("]\n", 41), 5 + MaxDepth - 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ds, err := Parse("deep.toml", []byte(tt.src))
			var le *LoadError
			if !errors.As(err, &le) || !errors.Is(err, errTooDeep) {
				t.Fatalf("got err %v (%d diagnostics); want a *LoadError for nesting too deep", err, len(ds))
			}
			if le.Line != tt.line {
				t.Errorf("got line %d; want %d", le.Line, tt.line)
			}
			want := fmt.Sprintf("deep.toml:%d:", tt.line)
			if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, fmt.Sprintf("nested deeper than %d levels", MaxDepth)) {
				t.Errorf("got %q; want %q… nested deeper than %d levels", msg, want, MaxDepth)
			}
		})
	}
}

// TestLimitsAtTheBound: each kind of nesting is accepted at MaxDepth and
// refused one level further.
func TestLimitsAtTheBound(t *testing.T) {
	t.Parallel()
	parts := func(n int) string { return strings.TrimSuffix(strings.Repeat("a.", n), ".") }
	shapes := map[string]func(depth int) string{
		"inline tables": func(d int) string { return nestedInline(d - 1) },
		"arrays":        func(d int) string { return "v = " + strings.Repeat("[", d-1) + "1" + strings.Repeat("]", d-1) + "\n" },
		"dotted key":    func(d int) string { return parts(d) + " = 1\n" },
		"table header":  func(d int) string { return "[" + parts(d) + "]\n" },
		"array header":  func(d int) string { return "[[" + parts(d-1) + "]]\n" },
		"header and key": func(d int) string {
			return "[" + parts(d-2) + "]\n" + "x.y = 1\n"
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := checkLimits("f.toml", shape(MaxDepth)); err != nil {
				t.Errorf("at MaxDepth: got %v; want nil", err)
			}
			if err := checkLimits("f.toml", shape(MaxDepth+1)); err == nil || !errors.Is(err, errTooDeep) {
				t.Errorf("at MaxDepth+1: got %v; want nesting too deep", err)
			}
		})
	}
}

// TestLimitsIgnoreStringsAndComments: brackets, braces, dots and quotes
// inside strings and comments add no nesting, and those files decode.
func TestLimitsIgnoreStringsAndComments(t *testing.T) {
	t.Parallel()
	many := strings.Repeat("[{", 100)
	deepKey := `"` + strings.Repeat("a.", 100) + `"`
	tests := map[string]string{
		"basic string":               `v = "` + many + `"`,
		"escaped quote":              `v = "\"` + many + `\""`,
		"escaped backslash":          `v = "\\"` + "\n" + `w = "` + many + `"`,
		"literal string":             `v = '` + many + `\'`,
		"multi-line basic":           "v = \"\"\"\n" + many + "\n\"\"\"",
		"multi-line basic, quotes":   "v = \"\"\"\"\"" + many + "\"\"\"\"\"\nw = 1",
		"multi-line basic, escaped":  "v = \"\"\"\\\"\"\"" + many + "\"\"\"",
		"line-ending backslash":      "v = \"\"\"a \\\n  " + many + "\"\"\"",
		"multi-line literal":         "v = '''\n" + many + "\n'''",
		"multi-line literal, quotes": "v = '''''" + many + "'''''",
		"comment":                    "# " + many + "\nv = 1 # " + many,
		"comment in an array":        "v = [ # " + many + "\n 1, # " + many + "\n]",
		"quoted key":                 deepKey + " = 1\n[t." + deepKey + "]\n" + "v = { " + deepKey + " = 1 }",
		"literal quoted key":         "'" + many + "' = 1",
		"strings in arrays":          `v = ["` + many + `", '` + many + `', """` + many + `"""]`,
		"datetime and floats":        "v = [1979-05-27 07:32:00Z, 1.5e3, 0x1f, inf, true]",
		"CRLF":                       "[a]\r\nv = \"" + many + "\"\r\nw = 1\r\n",
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := body + "\n"
			if err := checkLimits("f.toml", src); err != nil {
				t.Fatalf("checkLimits: %v; want nil", err)
			}
			var raw map[string]any
			if _, err := toml.Decode(src, &raw); err != nil {
				t.Fatalf("the test input is not TOML: %v", err)
			}
		})
	}
}

// TestLimitsTooManyEntries: more than MaxEntries key parts and array
// elements are refused, whether on lines, in one inline table, as headers
// or in an array; MaxEntries are accepted.
func TestLimitsTooManyEntries(t *testing.T) {
	t.Parallel()
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "k%d = 1\n", i)
		}
		return b.String()
	}
	inline := func(n int) string {
		var b strings.Builder
		b.WriteString("v = {")
		for i := range n - 2 {
			fmt.Fprintf(&b, "k%d = 1, ", i)
		}
		b.WriteString("z = 1}\n")
		return b.String()
	}
	headers := func(n int) string {
		var b strings.Builder
		for i := range n / 2 {
			fmt.Fprintf(&b, "[s.k%d]\n", i)
		}
		return b.String()
	}
	array := func(n int) string {
		return "v = [" + strings.Repeat("1, ", n-2) + "[]]\n"
	}
	for name, shape := range map[string]func(int) string{"lines": lines, "inline": inline, "headers": headers, "array": array} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := checkLimits("f.toml", shape(MaxEntries)); err != nil {
				t.Errorf("%d entries: got %v; want nil", MaxEntries, err)
			}
			_, _, err := Parse("f.toml", []byte(shape(MaxEntries+2)))
			if !errors.Is(err, errTooMany) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d keys and array elements", MaxEntries)) {
				t.Errorf("%d entries: got %v; want more than %d keys and array elements", MaxEntries+2, err, MaxEntries)
			}
		})
	}
}

// TestLoadTooLarge: a file one byte over MaxSize is refused unread, naming
// it.
func TestLoadTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	data := []byte(strings.Repeat("# a comment line that is harmless TOML\n", MaxSize/39+1)[:MaxSize+1])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(path)
	if !errors.Is(err, errTooLarge) || !strings.HasPrefix(err.Error(), path+": file is larger than 1048576 bytes") {
		t.Errorf("got %v; want %s: file is larger than 1048576 bytes", err, path)
	}
	if err := os.WriteFile(path, data[:MaxSize], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); err != nil {
		t.Errorf("a file of exactly MaxSize: got %v; want it read", err)
	}
}

// TestLimitsAcceptFixtures: every fixture, and the example project, is
// within the limits.
func TestLimitsAcceptFixtures(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.toml"))
	files = append(files, filepath.Join("..", "..", "examples", "demo", FileName))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkLimits(file, stripBOM(string(data))); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
	if len(files) < 10 {
		t.Errorf("found %d fixtures; want the testdata ones", len(files))
	}
}

// TestLoadContextCanceled: a canceled context stops Load with an error that
// wraps the context's.
func TestLoadContextCanceled(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "valid", "readme.toml")
	ctx, cancel := context.WithCancel(context.Background())
	if _, _, err := LoadContext(ctx, path); err != nil {
		t.Fatalf("live context: %v", err)
	}
	cancel()
	_, _, err := LoadContext(ctx, path)
	var le *LoadError
	if !errors.As(err, &le) || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("got %v; want a *LoadError naming %s and wrapping context.Canceled", err, path)
	}
	data, _ := os.ReadFile(path)
	if _, _, err := ParseContext(ctx, "f.toml", data); !errors.Is(err, context.Canceled) {
		t.Errorf("ParseContext: got %v; want context.Canceled", err)
	}
}

// BenchmarkRefuseDeep: refusing the 16 KB file 4,000 deep (which
// took 747 MB to decode) costs a copy of the input and the error.
func BenchmarkRefuseDeep(b *testing.B) {
	for _, depth := range []int{4000, 50000} {
		src := []byte(limitsHead + nestedInline(depth))
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, _, err := Parse("deep.toml", src); !errors.Is(err, errTooDeep) {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzLimits: whatever checkLimits accepts and TOML decodes nests at most
// 2*MaxDepth levels and 2*MaxEntries keys and array elements (an
// [[array]] header adds its element too): the scanner never undercounts.
func FuzzLimits(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.toml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		nestedInline(MaxDepth), "v = [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", "[[a]]\n[[a.b]]\n[[a.b.c]]\n",
		"a.b.c.d.e.f.g.h = 1", `v = "[[[[{{{{"`, "v = '''\n[[[[\n'''", "v = \"\"\"\\\"\"\"[[[[\"\"\"",
		"v = { a = [ { b = [ { c = 1 } ] } ] }", "# [[[[\nv = [ # {{{{\n1 ]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := stripBOM(string(data))
		if checkLimits("f.toml", src) != nil {
			return
		}
		var raw map[string]any
		if _, err := toml.Decode(string(data), &raw); err != nil {
			return
		}
		entries := 0
		if d := treeDepth(raw, &entries); d > 2*MaxDepth {
			t.Fatalf("accepted a document %d levels deep", d)
		}
		if entries > 2*MaxEntries {
			t.Fatalf("accepted a document with %d keys and array elements", entries)
		}
	})
}

// treeDepth is how many levels of tables and arrays v holds (a table's
// keys and an array each add one; an empty table none), adding its keys and
// array elements to *entries.
func treeDepth(v any, entries *int) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			*entries++
			deepest = max(deepest, 1+treeDepth(e, entries))
		}
	case []map[string]any:
		deepest = 1
		for _, e := range v {
			*entries++
			deepest = max(deepest, 1+treeDepth(e, entries))
		}
	case []any:
		deepest = 1
		for _, e := range v {
			*entries++
			deepest = max(deepest, 1+treeDepth(e, entries))
		}
	}
	return deepest
}
