package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func BenchmarkParseReadme(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/readme.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := Parse("readme.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// pathological inputs as large as MaxSize, MaxEntries and MaxDepth allow
// must stay roughly linear.
func pathological() map[string]string {
	var inline, lines, chain strings.Builder
	inline.WriteString("[project]\nname = \"a\"\n[services.x]\ncmd = \"y\"\nenv = {")
	for i := 0; i < MaxEntries-10; i++ {
		fmt.Fprintf(&inline, "K%d = \"v\", ", i)
	}
	inline.WriteString("Z = \"z\"}\n")
	lines.WriteString("[project]\nname = \"a\"\n[services.x]\nadapter = \"y\"\n[services.x.config]\n")
	for i := 0; i < MaxEntries-10; i++ {
		fmt.Fprintf(&lines, "k%d = \"postgres://a:b@c/${x.port}\"\n", i)
	}
	chain.WriteString("[project]\nname = \"a\"\n")
	for i := 0; i < (MaxEntries-10)/5; i++ {
		fmt.Fprintf(&chain, "[services.s%d]\ncmd = \"${s%d.port}\"\ndepends_on = [\"s%d\"]\n", i, i+1, i+1)
	}
	n := MaxDepth - 4 // services.x.config.v
	deep := "[project]\nname = \"a\"\n[services.x]\nadapter = \"y\"\nconfig = { v = " + strings.Repeat("[", n) + strings.Repeat("]", n) + " }\n"
	deepStrings := "[project]\nname = \"a\"\n[services.x]\nadapter = \"y\"\nconfig = { v = " + strings.Repeat("[", n) + strings.Repeat(`"${env.A}",`, MaxEntries-30) + strings.Repeat("]", n) + " }\n"
	return map[string]string{"inline": inline.String(), "lines": lines.String(), "chain": chain.String(), "deep": deep, "deep-strings": deepStrings}
}

func BenchmarkParsePathological(b *testing.B) {
	for name, src := range pathological() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, _, err := Parse("f.toml", []byte(src)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPathological: inputs at the limits shaped to hurt (one line with
// 10,000 keys, 10,000 credentials, a 2,000-service depends_on chain, arrays
// nested to MaxDepth, 10,000 tokens at MaxDepth) parse without error or
// panic. Deeper or bigger ones are refused (TestLimitsRefuseDeep).
func TestPathological(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	for name, src := range pathological() {
		if len(src) > MaxSize {
			t.Fatalf("%s is %d bytes; want at most MaxSize", name, len(src))
		}
		if _, _, err := Parse(name+".toml", []byte(src)); err != nil {
			t.Errorf("%s: got %v; want diagnostics only", name, err)
		}
	}
}
