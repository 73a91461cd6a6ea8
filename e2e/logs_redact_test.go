package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogsRedactSecrets: a service that prints an ${env.*} value raw,
// URL-escaped, base64 (alone and inside a basic-auth token), hex, and
// wrapped over two lines leaves none of it in `binky logs` or
// `binky logs -f`, though its log file on disk holds it all.
func TestLogsRedactSecrets(t *testing.T) {
	const secret = "E2e-Sup3r/S3cret-Value"
	e := newEnv(t, `
[project]
name = "leaky"
port_range = PORTRANGE

[services.leaky]
env = { S = "${env.LEAKY_SECRET}" }
cmd = """
echo "raw $S"
echo "query E2e-Sup3r%2FS3cret-Value"
printf %s "$S" | base64
printf 'user:%s' "$S" | base64
printf %s "$S" | od -An -tx1 | tr -d ' \n'; echo
echo "split E2e-Sup3r/S"
echo "3cret-Value rest"
echo end-of-leaks
exec sleep 600
"""
`)
	e.extra = []string{"LEAKY_SECRET=" + secret}
	e.must("up", "-q", "main")
	leaks := []string{
		secret,
		url.QueryEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		hex.EncodeToString([]byte(secret)),
		"E2e-Sup3r/S\n3cret-Value",
		"3cret-Value",
	}
	check := func(what, out string) {
		t.Helper()
		if !strings.Contains(out, "end-of-leaks") {
			t.Fatalf("%s printed no end marker:\n%s", what, out)
		}
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("%s shows %q:\n%s", what, l, out)
			}
		}
		if strings.Contains(out, base64.StdEncoding.EncodeToString([]byte("user:" + secret))[8:28]) {
			t.Errorf("%s shows the secret inside a base64 token:\n%s", what, out)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = e.must("logs", "main", "leaky", "-n", "0").stdout
		if strings.Contains(out, "end-of-leaks") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	check("logs", out)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "binky"), "logs", "-f", "-n", "20", "main", "leaky")
	cmd.Dir = e.repo
	cmd.Env = e.environ()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var b strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "end-of-leaks" {
			break
		}
	}
	check("logs -f", b.String())
}
