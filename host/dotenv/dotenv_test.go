package dotenv

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "# comment\n\nexport A=1\nB = two words # trailing\nC='lit $X \\n'\nD=\"a\\nb \\\"q\\\"\"\nE=\nF.G=x\n"
	got, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "two words", "C": `lit $X \n`, "D": "a\nb \"q\"", "E": "", "F.G": "x"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q; want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys; want %d", len(got), len(want))
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"NOEQUALS", "=x", "1A=x", "A='open", "A=\"open", "A B=c"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q): got nil error; want one", in)
		} else if !strings.Contains(err.Error(), "line 1") {
			t.Errorf("Parse(%q): error %q does not name the line", in, err)
		}
	}
}

func TestQuoteEvalsBack(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, v := range []string{"plain", "it's", "$(touch /tmp/pwned)", "`x`", "a\nb", `\"'`, ""} {
		out, err := exec.Command("sh", "-c", "X="+Quote(v)+"; printf %s \"$X\"").Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != v {
			t.Errorf("eval of Quote(%q): got %q", v, out)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("A=1\nB='x'\nC=\"y\\n\"\n"))
	f.Add([]byte("export K = v # c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		for k := range m {
			if !validKey(k) {
				t.Fatalf("invalid key %q accepted", k)
			}
		}
	})
}
