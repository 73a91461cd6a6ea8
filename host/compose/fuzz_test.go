package compose

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/binkyhq/binky/host/config"
)

// FuzzCompose feeds any bytes to the compose reader as a compose file.
// Whatever it reads, init's two rules hold: the rendered file (and its
// TODO blocks uncommented) has no binky check error, and no literal value
// of a variable with a secret's name reaches it. Seeds: every fixture's
// compose files, and testdata/fuzz/FuzzCompose.
func FuzzCompose(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "*", "*compose*"))
	for _, path := range dirs {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("db:\n  image: postgres\nweb:\n  build: .\n  links: [db]\n  environment: {PORT: 3000, PW: ${X:-y}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Project{Files: []string{"compose.yaml"}}
		if err := p.merge("compose.yaml", data, map[string]*Service{}); err != nil || len(p.Services) == 0 {
			return
		}
		out, _ := Render(p, "fuzz")
		for _, file := range [][]byte{out, uncomment(out)} {
			_, ds, err := config.Parse("binky.toml", file)
			if err != nil {
				t.Fatalf("config.Parse: %v\n%s", err, file)
			}
			for _, d := range ds {
				if d.Severity == config.SeverityError {
					t.Fatalf("binky check error: %s\ninput:\n%s\nfile:\n%s", d.String(), data, file)
				}
			}
		}
		for _, v := range secretLiterals(data) {
			if bytes.Contains(out, []byte(v)) {
				t.Fatalf("the secret value %q reached binky.toml:\n%s", v, out)
			}
		}
	})
}

// secretLiterals returns the literal values (8 bytes or more, no $) of
// environment: entries whose name SecretName calls a secret.
func secretLiterals(data []byte) []string {
	var doc struct {
		Services map[string]struct {
			Environment map[string]any `yaml:"environment"`
		} `yaml:"services"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []string
	for _, s := range doc.Services {
		for k, v := range s.Environment {
			if str, ok := v.(string); ok && SecretName(k) && len(str) >= 8 && !strings.Contains(str, "$") {
				out = append(out, str)
			}
		}
	}
	return out
}

// FuzzKeepParts: for any name and value, what init keeps of a value whose
// name is a secret is at most a switch (true, 1…) or variables, and kept
// literal text never holds a ${ binky would read as a token.
func FuzzKeepParts(f *testing.F) {
	for _, s := range [][2]string{{"PORT", "3000"}, {"S3_SECRET", "${MINIO_PASSWORD:-x}"}, {"URL", "https://u:${P}@h/x?a=1"}, {"X", "$${y}"}, {"A", "${B:-${C}}"}, {"AUTH_ON", "true"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		parts := keepParts(name, value)
		for _, p := range parts {
			if p.Var == "" && strings.Contains(p.Lit, "${") {
				t.Fatalf("keepParts(%q, %q) keeps the literal %q, which reads as a token", name, value, p.Lit)
			}
			if p.Var == "" && SecretName(name) && !(flagValue(p.Lit) && !configSecretName(name)) {
				t.Fatalf("keepParts(%q, %q) keeps the literal %q of a secret", name, value, p.Lit)
			}
			if p.HasDefault && (SecretName(name) || SecretName(p.Var) || strings.Contains(p.Default, "$")) {
				t.Fatalf("keepParts(%q, %q) keeps the default %q", name, value, p.Default)
			}
		}
	})
}
