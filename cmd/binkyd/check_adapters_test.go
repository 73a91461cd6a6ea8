package main

import (
	"github.com/binkyhq/binky/cmd/internal/cli"

	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckUnknownAdapter: an adapter name nothing answers to is a warning
// at its line with the nearest known name; discovered names and aliases
// and the product's names are known.
func TestCheckUnknownAdapter(t *testing.T) {
	for _, tc := range []struct {
		adapter string
		want    string // "" for no warning
	}{
		{"postgress", `binky.toml:5: warning: services.db uses adapter "postgress", which no known adapter answers to (did you mean "postgres"?)`},
		{"rabitmq", `did you mean "rabbitmq"?`},
		{"postgres", ""},
		{"qdrant", ""},
		{"acme-store", ""}, // discovered
		{"acmestore", ""},  // a discovered alias
		{"zzzzzz", "binky adapters lists the installed adapters"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "binky.toml")
		src := "[project]\nname = \"p\"\n\n[services.db]\nadapter = \"" + tc.adapter + "\"\nadmin_url = \"${env.DB_ADMIN_URL}\"\n"
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		c := &checkCmd{Check: cli.Check{Path: file}, known: func(context.Context) []string { return []string{"acme-store", "acmestore"} }}
		if err := c.run(context.Background(), &out, &errOut); err != nil {
			t.Fatalf("check with adapter %q: %v\n%s", tc.adapter, err, out.String())
		}
		got := strings.ReplaceAll(out.String(), dir+string(os.PathSeparator), "")
		switch {
		case tc.want == "" && strings.Contains(got, "adapter"):
			t.Errorf("adapter %q: got %q; want no adapter warning", tc.adapter, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("adapter %q: got %q; want it to contain %q", tc.adapter, got, tc.want)
		}
	}
}
