package man

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// plain undoes the roff escapes a test looks through.
func plain(b []byte) string {
	return strings.NewReplacer(`\-`, "-", `\fB`, "", `\fR`, "", `\fI`, "", `\&`, "", `\e`, `\`).Replace(string(b))
}

// TestConfigEveryKey: every key of every key table in docs/config.md is an
// entry of binky.toml(5).
func TestConfigEveryKey(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := Config(md, "test")
	if err != nil {
		t.Fatal(err)
	}
	got := plain(page)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	keys := row.FindAllStringSubmatch(string(md), -1)
	if len(keys) < 20 {
		t.Fatalf("found %d keys in docs/config.md; want the whole reference", len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(got, ".TP\n"+k[1]+"\n") {
			t.Errorf("binky.toml(5) has no entry for %q", k[1])
		}
	}
	for _, s := range []string{".TH \"BINKY.TOML\" 5", ".SH NAME", ".SH TOKENS"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("binky.toml(5) lacks %q", s)
		}
	}
	if _, err := Config([]byte("# nothing\n\nno tables\n"), "x"); err == nil {
		t.Error("a reference without a key table: got no error")
	}
}

// TestBinkyEveryVerbAndFlag renders a small grammar and checks each verb,
// argument and flag is on the page and hidden ones are not.
func TestBinkyEveryVerbAndFlag(t *testing.T) {
	var g struct {
		Home string `help:"State directory." env:"BINKY_HOME"`
		Up   struct {
			Branch string `arg:"" optional:"" help:"The branch."`
			NoWait bool   `help:"Refuse instead of waiting."`
		} `cmd:"" help:"Bring a world up."`
		Adapter struct {
			Test struct {
				Name    string `arg:"" help:"The adapter."`
				Timeout string `default:"60s" help:"Deadline."`
			} `cmd:"" help:"Run the kit."`
		} `cmd:"" help:"Act on an adapter."`
		Secret struct{} `cmd:"" hidden:"" name:"__secret" help:"Hidden."`
	}
	p, err := kong.New(&g, kong.Name("binky"), kong.Description("Worlds."))
	if err != nil {
		t.Fatal(err)
	}
	page := plain(Binky(p.Model, "test"))
	if got, want := strings.Join(Commands(p.Model), ","), "up,adapter,adapter test"; got != want {
		t.Errorf("commands: got %q; want %q", got, want)
	}
	for _, w := range []string{".SS binky up [<branch>]", "--no-wait", ".SS binky adapter test <name>", "--timeout=", "(default: 60s)", "--home=", "($BINKY_HOME)"} {
		if !strings.Contains(page, w) {
			t.Errorf("binky(1) lacks %q:\n%s", w, page)
		}
	}
	if strings.Contains(page, "__secret") {
		t.Error("binky(1) shows a hidden verb")
	}
}
