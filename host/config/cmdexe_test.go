package config

import (
	"runtime"
	"strings"
	"testing"
)

func TestCmdExeReadings(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string // kind:text
	}{
		{`app --db "${self.url}"`, nil},
		{`app --db '${self.url}'`, []string{`token:'${self.url}'`}},
		{`app --name '${a.b}@x'`, []string{`quoted:'${a.b}@x'`}},
		{`cd 'C:\my dir' && app`, []string{`quoted:'C:\my dir'`}},
		{`echo "it's" fine`, nil},
		{`app --url "$BINKY_API_URL"`, []string{`var:$BINKY_API_URL`}},
		{`app --url ${HOME}/x $1 $ $$`, []string{`var:${HOME}`}},
		{`app '$NOT'`, []string{`quoted:'$NOT'`}},
		{`app \'x\' \$Y`, nil},
		{"a\nb", []string{"lines:a\nb"}},
		{"a &&\n  b\r\n\n", []string{"lines:a &&\n  b\r\n\n"}},
		{"a\n", nil},
		{`app 'unclosed`, nil},
		{`app '"x"'`, nil}, // no spelling both read alike: not reported
	} {
		var got []string
		for _, r := range CmdExeReadings(tc.cmd) {
			k := map[ReadingKind]string{ReadingMultiLine: "lines", ReadingSingleQuotedToken: "token", ReadingSingleQuoted: "quoted", ReadingVariable: "var"}[r.Kind]
			got = append(got, k+":"+r.Text)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("CmdExeReadings(%q) = %q; want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestCheckWindows: each construct is reported at its line with the
// portable spelling; a multi-line command is an error.
func TestCheckWindows(t *testing.T) {
	src := `[project]
name = "p"

[services.db]
adapter = "sqlite"
migrate = "m --db '${self.url}'"

[services.web-app]
cmd = "serve --port $PORT"
url = "web"

[agents]
verify = [
  "check \"$BINKY_WEB_APP_DIRECT_URL\" $BINKY_WEB_APP_URL $TOKEN",
  """
one
two""",
]
`
	cfg, _, err := Parse("binky.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ds := CheckWindows("binky.toml", src, cfg)
	want := []string{
		`binky.toml:6: warning: services.db.migrate quotes '${self.url}' with single quotes: cmd.exe has no single quotes, so the program receives the ' characters too (write "${self.url}": sh and cmd.exe read it alike)`,
		"binky.toml:9: warning: services.web-app.cmd uses $PORT",
		"(write ${self.port}:",
		"binky.toml:14: warning: agents.verify[0] uses $BINKY_WEB_APP_DIRECT_URL",
		"(write http://127.0.0.1:${web-app.port}:",
		"binky.toml:14: warning: agents.verify[0] uses $BINKY_WEB_APP_URL",
		"(write ${web-app.url}:",
		"binky.toml:14: warning: agents.verify[0] uses $TOKEN",
		"(write ${env.TOKEN}:",
		"binky.toml:15: error: agents.verify[1] has 2 lines: cmd.exe runs only the first",
	}
	var all strings.Builder
	for _, d := range ds {
		all.WriteString(d.String() + "\n")
	}
	for _, w := range want {
		if !strings.Contains(all.String(), w) {
			t.Errorf("diagnostics lack %q; got\n%s", w, all.String())
		}
	}
	if len(ds) != 6 {
		t.Errorf("got %d diagnostics; want 6:\n%s", len(ds), all.String())
	}
	// Load reports them itself where commands run with cmd.exe, and only there.
	_, loaded, _ := Parse("binky.toml", []byte(src))
	if got := loaded.HasErrors(); got != (runtime.GOOS == "windows") {
		t.Errorf("Parse on %s: errors %v; want %v:\n%v", runtime.GOOS, got, runtime.GOOS == "windows", loaded)
	}
}

func FuzzCmdExeReadings(f *testing.F) {
	for _, s := range []string{`a '${b.c}' "$D" ${E} \'`, "x\ny", `'`, `$`, `${`, `"'"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range CmdExeReadings(s) {
			if r.Kind != ReadingMultiLine && !strings.Contains(s, r.Text) {
				t.Fatalf("reading %q not in %q", r.Text, s)
			}
		}
	})
}
