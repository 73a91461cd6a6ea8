package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// positioned matches "file:line: …" or "file:line:col: …".
var positioned = regexp.MustCompile(`^[^\n]+:\d+(:\d+)?: [^\n]+$`)

// TestBadInput: input that is no binky.toml at all never panics and gives
// one error on one line, with a position wherever one exists.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := make([]byte, 10<<20)
	for i := range big {
		big[i] = "a = 1\n"[i%6]
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i>>3)
	}
	tests := []struct {
		name     string
		path     string
		wantErr  bool   // a *LoadError (exit 2) rather than diagnostics
		wantLine bool   // the message carries a line number
		want     string // a substring of the message
	}{
		{"missing file", filepath.Join(dir, "nope.toml"), true, false, "cannot read: " + notExistText(t)},
		{"directory", dir, true, false, "is a directory"},
		{"binary garbage", write("garbage.toml", garbage), true, true, "not valid TOML"},
		{"10 MB file", write("big.toml", big), true, false, "larger than 1048576 bytes"},
		{"UTF-16", write("utf16.toml", []byte("\xff\xfe[\x00p\x00]\x00")), true, true, "UTF-16"},
		{"duplicate keys", write("dup.toml", []byte("[project]\nname = \"a\"\nname = \"b\"\n")), true, true, "already been defined"},
		{"duplicate tables", write("duptab.toml", []byte("[project]\nname = \"a\"\n[project]\n")), true, true, "already been defined"},
		{"unterminated string", write("str.toml", []byte("[project]\nname = \"a\n")), true, true, "not valid TOML"},
		{"wrong type: table for string", write("wt1.toml", []byte("[project]\nname = \"a\"\n[services.x]\ncmd = { a = 1 }\n")), false, true, "services.x.cmd must be a string, not a table"},
		{"wrong type: string for table", write("wt2.toml", []byte("project = \"a\"\n")), false, true, "project must be a table, not a string"},
		{"wrong type: datetime", write("wt3.toml", []byte("[project]\nname = 1979-05-27 07:32:00\n")), false, true, "project.name must be a string, not a datetime"},
		{"wrong type: array of tables", write("wt4.toml", []byte("[project]\nname = \"a\"\n[[services.x.health]]\nhttp = \"http://a/\"\n")), false, true, "services.x.health must be a URL string or a table, not an array of tables"},
		{"empty file", write("empty.toml", nil), false, true, "missing [project] table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ds, err := Load(tt.path)
			var msg string
			if tt.wantErr {
				var le *LoadError
				if !errors.As(err, &le) {
					t.Fatalf("got err %v (diagnostics %v); want a *LoadError", err, ds)
				}
				msg = err.Error()
			} else {
				if err != nil {
					t.Fatalf("got err %v; want diagnostics", err)
				}
				if !ds.HasErrors() {
					t.Fatalf("got no error diagnostics; want one")
				}
				for _, d := range ds {
					if d.Severity == SeverityError {
						msg = d.String()
						break
					}
				}
				for _, d := range ds {
					if d.Line < 1 {
						t.Errorf("got line %d in %v; want >= 1", d.Line, d)
					}
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("got a multi-line message %q; want one line", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("got %q; want it to contain %q", msg, tt.want)
			}
			if tt.wantLine && !positioned.MatchString(msg) {
				t.Errorf("got %q; want file:line: …", msg)
			}
			if !strings.HasPrefix(msg, tt.path) {
				t.Errorf("got %q; want it to start with the path %q", msg, tt.path)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	_, _, err := Parse("big.toml", make([]byte, MaxSize+1))
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("got %v; want a *LoadError", err)
	}
}

// TestPositions checks the key scanner against TOML's many spellings.
func TestPositions(t *testing.T) {
	src := "\xef\xbb\xbf# comment\n" + // line 1, with BOM
		"[project] # c\n" + // 2
		"name = \"a\" # c\n" + // 3
		"port_range = [\n" + // 4
		"  42000,\n" + // 5
		"  # note\n" + // 6
		"  43000 ]\n" + // 7
		"[ services . \"my api\" ]\n" + // 8
		"cmd = '''x\n" + // 9
		"''' \n" + // 10
		"env = { A = \"1\", \"B.C\" = \"2\" }\n" + // 11
		"  health.http = \"http://x/\"\n" + // 12
		"when = 1979-05-27 07:32:00\n" + // 13
		"[[arr]]\n" + // 14
		"k = 1\n" + // 15
		"[[arr]]\n" + // 16
		"k = \"\"\"a\"\"\"\"\"\n" + // 17
		"t = { \"é\" = 1, b = 2 }\n" // 18: columns count runes
	ix := indexPositions(stripBOM(src))
	tests := []struct {
		path []string
		want pos
	}{
		{[]string{"project"}, pos{2, 2}},
		{[]string{"project", "name"}, pos{3, 1}},
		{[]string{"project", "port_range"}, pos{4, 1}},
		{[]string{"project", "port_range", "#0"}, pos{5, 3}},
		{[]string{"project", "port_range", "#1"}, pos{7, 3}},
		{[]string{"services", "my api"}, pos{8, 3}},
		{[]string{"services", "my api", "cmd"}, pos{9, 1}},
		{[]string{"services", "my api", "env"}, pos{11, 1}},
		{[]string{"services", "my api", "env", "A"}, pos{11, 9}},
		{[]string{"services", "my api", "env", "B.C"}, pos{11, 18}},
		{[]string{"services", "my api", "health", "http"}, pos{12, 3}},
		{[]string{"services", "my api", "when"}, pos{13, 1}},
		{[]string{"arr", "#0", "k"}, pos{15, 1}},
		{[]string{"arr", "#1"}, pos{16, 3}},
		{[]string{"arr", "#1", "k"}, pos{17, 1}},
		{[]string{"arr", "#1", "t", "é"}, pos{18, 7}},
		{[]string{"arr", "#1", "t", "b"}, pos{18, 16}},
	}
	for _, tt := range tests {
		if got := ix.lookup(tt.path...); got != tt.want {
			t.Errorf("lookup(%q) = %v; want %v", tt.path, got, tt.want)
		}
	}
	if got := ix.lookup("nope", "deeper"); got != (pos{line: 1}) {
		t.Errorf("lookup of a missing key = %v; want line 1", got)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A binky.toml above the repository root must not be found.
	if err := os.WriteFile(filepath.Join(root, FileName), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(deep); err == nil {
		t.Errorf("Find outside any config = %q; want an error", got)
	} else if !strings.Contains(err.Error(), "repository root") {
		t.Errorf("got %v; want it to name the repository root", err)
	}
	want := filepath.Join(repo, FileName)
	if err := os.WriteFile(want, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{deep, repo} {
		if got, err := Find(dir); err != nil || got != want {
			t.Errorf("Find(%q) = %q, %v; want %q", dir, got, err, want)
		}
	}
	// A directory named binky.toml is not the file.
	sub := filepath.Join(deep, FileName)
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(deep); err != nil || got != want {
		t.Errorf("Find past a binky.toml directory = %q, %v; want %q", got, err, want)
	}
	// A .git file (a linked worktree) is a boundary too.
	wt := filepath.Join(root, "wt")
	if err := os.MkdirAll(filepath.Join(wt, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../repo/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(filepath.Join(wt, "x")); err == nil {
		t.Errorf("Find across a .git file = %q; want an error", got)
	}
}

// notExistText is how this platform words a missing file ("no such file or
// directory" on Unix, "The system cannot find the file specified." on
// Windows).
func notExistText(t *testing.T) string {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	var pe *os.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("open a missing file: %v", err)
	}
	return pe.Err.Error()
}
