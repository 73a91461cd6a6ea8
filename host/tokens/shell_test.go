package tokens

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRenderShell(t *testing.T) {
	coords := map[string]string{
		"api.port":      "41001",
		"worktree.path": "/src/x",
		"env.A":         "v",
		"env.a":         "w",
	}
	tests := []struct {
		name, in, want string
		env            []string
	}{
		{"no tokens", "exec server --port 8080", "exec server --port 8080", nil},
		{"unknown only", "echo ${HOME} ${vault.key}", "echo ${HOME} ${vault.key}", nil},
		{"unquoted", "exec server --port ${self.port}", `exec server --port "${BINKY_TOKEN_SELF_PORT}"`, []string{"BINKY_TOKEN_SELF_PORT=41001"}},
		{"double", `cd "${worktree.path}/web"`, `cd "${BINKY_TOKEN_WORKTREE_PATH}/web"`, []string{"BINKY_TOKEN_WORKTREE_PATH=/src/x"}},
		{"single", `sh -c 'cd ${worktree.path}'`, `sh -c 'cd '"${BINKY_TOKEN_WORKTREE_PATH}"''`, []string{"BINKY_TOKEN_WORKTREE_PATH=/src/x"}},
		{"subst in double", `x="$(basename ${worktree.path})"`, `x="$(basename "${BINKY_TOKEN_WORKTREE_PATH}")"`, []string{"BINKY_TOKEN_WORKTREE_PATH=/src/x"}},
		{"arith", `echo $((${api.port}+1))`, `echo $((${BINKY_TOKEN_API_PORT}+1))`, []string{"BINKY_TOKEN_API_PORT=41001"}},
		{"repeated token, one variable", "${env.A}${env.A}", `"${BINKY_TOKEN_ENV_A}""${BINKY_TOKEN_ENV_A}"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"folding collision numbered", "${env.A} ${env.a}", `"${BINKY_TOKEN_ENV_A}" "${BINKY_TOKEN_ENV_A_2}"`, []string{"BINKY_TOKEN_ENV_A=v", "BINKY_TOKEN_ENV_A_2=w"}},
		{"backslash before token", `echo \${env.A}`, `echo "${BINKY_TOKEN_ENV_A}"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"escaped quote stays", `echo \' ${env.A}`, `echo \' "${BINKY_TOKEN_ENV_A}"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"comment quote ignored", "true # don't\necho ${env.A}", "true # don't\necho \"${BINKY_TOKEN_ENV_A}\"", []string{"BINKY_TOKEN_ENV_A=v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderShell(tt.in, "api", coords)
			if got.Command != tt.want {
				t.Errorf("command = %s; want %s", got.Command, tt.want)
			}
			if fmt.Sprint(got.Env) != fmt.Sprint(tt.env) {
				t.Errorf("env = %q; want %q", got.Env, tt.env)
			}
		})
	}
}

// hostile values: each one would run a command, split into words, glob, or
// end a quote if it were pasted into the command.
var hostile = []string{
	"", " ", "plain", "two words", "  lead and trail  ", "*", "/*", "?",
	"$(touch${IFS}PWNED)", "`touch PWNED`", "a;touch PWNED", "a&&touch PWNED", "x|touch PWNED",
	"p&?#q", "#hash", "it's", `say "hi"`, `back\slash`, `\`, `'`, `"`, "$HOME", "${HOME}", "$((1+1))",
	"new\nline", "tab\tz", "~", "~root", "-n", "a=b", "}", "${", "<in >out",
}

// TestRenderShellRealShell runs rendered commands in the real /bin/sh: for
// every template and every hostile value, printf prints exactly the value
// in its place, and nothing ran.
func TestRenderShellRealShell(t *testing.T) {
	sh := shellOrSkip(t)
	type tmpl struct {
		cmd  string // contains ${env.V} (and maybe ${env.W})
		want string // the output, with ${env.V}/${env.W} the values
	}
	templates := []tmpl{
		{`printf '[%s]\n' ${env.V}`, "[${env.V}]\n"},
		{`printf '[%s]\n' x${env.V}y`, "[x${env.V}y]\n"},
		{`printf '[%s]\n' "x${env.V}y"`, "[x${env.V}y]\n"},
		{`printf '[%s]\n' 'x${env.V}y'`, "[x${env.V}y]\n"},
		{`printf '[%s]\n' "$(printf '%s' ${env.V})"`, "[${env.V}]\n"},
		{`printf '[%s]\n' "$(printf '%s' "${env.V}")"`, "[${env.V}]\n"},
		{"printf '[%s]\\n' \"`printf '%s' ${env.V}`\"", "[${env.V}]\n"},
		{`printf '[%s|%s]\n' ${env.V} ${env.W}`, "[${env.V}|${env.W}]\n"},
		{`printf '[%s]\n' "${env.V}"'${env.W}'${env.V}`, "[${env.V}${env.W}${env.V}]\n"},
		{`X=${env.V}; printf '[%s]\n' "$X"`, "[${env.V}]\n"},
		{`printf '[%s]\n' ${UNSET_BINKY:-${env.V}}`, "[${env.V}]\n"},
		{`printf '[%s]\n' "${UNSET_BINKY:-${env.V}}"`, "[${env.V}]\n"},
		{"true # it's a comment ${env.V}\nprintf '[%s]\\n' ${env.W}", "[${env.W}]\n"},
		{`printf '[%s]\n' \"${env.V}\"`, "[\"${env.V}\"]\n"},
		{`if true; then printf '[%s]\n' ${env.V}; fi`, "[${env.V}]\n"},
		{`for a in ${env.V}; do printf '[%s]\n' "$a"; done`, "[${env.V}]\n"},
	}
	dir := t.TempDir()
	for ti, tp := range templates {
		for vi, v := range hostile {
			w := hostile[(vi+7)%len(hostile)]
			coords := map[string]string{"env.V": v, "env.W": w}
			r := RenderShell(tp.cmd, "", coords)
			want := Render(tp.want, "", coords)
			cmd := exec.Command(sh, "-c", r.Command)
			cmd.Dir = dir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent-home"}, r.Env...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Errorf("template %d value %q: %v\ncommand: %s\nstderr: %s", ti, v, err, r.Command, errb.String())
				continue
			}
			if out.String() != want {
				t.Errorf("template %d %q with V=%q W=%q:\ncommand: %s\ngot  %q\nwant %q", ti, tp.cmd, v, w, r.Command, out.String(), want)
			}
			if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
				t.Fatalf("template %d value %q ran a command: %s", ti, v, r.Command)
			}
		}
	}
}

// TestRenderShellRandomWords builds random shell words out of quoted,
// unquoted, substituted and escaped pieces around tokens, and checks that
// the real shell yields exactly the word they mean.
func TestRenderShellRandomWords(t *testing.T) {
	sh := shellOrSkip(t)
	rng := rand.New(rand.NewPCG(12, 7))
	dir := t.TempDir()
	lits := []string{"a", "b-c", "d.e", "/f", "9"}
	for n := 0; n < 300; n++ {
		var cmd, want strings.Builder
		coords := map[string]string{}
		for p := 0; p < 1+rng.IntN(5); p++ {
			name := fmt.Sprintf("env.T%d", p)
			val := hostile[rng.IntN(len(hostile))]
			coords[name] = val
			tok := "${" + name + "}"
			lit := lits[rng.IntN(len(lits))]
			switch rng.IntN(8) {
			case 0:
				cmd.WriteString(lit + tok)
			case 1:
				cmd.WriteString(`"` + lit + tok + `"`)
			case 2:
				cmd.WriteString(`'` + lit + tok + `'`)
			case 3:
				cmd.WriteString(`"$(printf %s ` + lit + tok + `)"`)
			case 4:
				cmd.WriteString("\"`printf %s " + lit + tok + "`\"")
			case 5:
				cmd.WriteString(`\` + lit + tok) // an escaped literal first byte
			case 6:
				cmd.WriteString(`"'` + lit + `'"` + tok)
				lit = "'" + lit + "'"
			case 7:
				cmd.WriteString(`'"'` + lit + tok)
				lit = `"` + lit
			}
			want.WriteString(lit + val)
		}
		// No hostile value ends in a newline, which $(…) would drop.
		wantStr := want.String()
		r := RenderShell("printf '%s' "+cmd.String(), "", coords)
		c := exec.Command(sh, "-c", r.Command)
		c.Dir = dir
		c.Env = append([]string{"PATH=" + os.Getenv("PATH")}, r.Env...)
		out, err := c.CombinedOutput()
		if err != nil || string(out) != wantStr {
			t.Errorf("word %s\nrendered %s\ngot  %q (%v)\nwant %q", cmd.String(), r.Command, out, err, wantStr)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Fatalf("word %s ran a command", cmd.String())
		}
	}
}

func shellOrSkip(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX shell on Windows; commands there get plain substitution")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	return sh
}

// FuzzRenderShell: the rendered command never depends on the values, so
// no value can reach the shell's parser; every rendered token's value is in
// Env; and a command without known tokens is unchanged.
func FuzzRenderShell(f *testing.F) {
	for _, s := range []string{
		"exec server --port ${self.port}", `cd "${worktree.path}" && make`, `sh -c 'echo ${env.A}'`,
		"echo `echo ${env.A}` $(( ${self.port} + 1 )) \"$(x ${env.A})\"", "# ${env.A}\n${env.A}", `\${env.A}"\${env.A}"`,
		"${a${env.A}}", "'${env.A}", "\"${env.A}", "$(${env.A}", "${env.A}${self.port}",
	} {
		f.Add(s, "$(touch${IFS}/tmp/pwned)", "&?#")
	}
	f.Fuzz(func(t *testing.T, s, v1, v2 string) {
		names := map[string]bool{}
		for _, r := range Refs(s) {
			names[r] = true
		}
		one, two := map[string]string{}, map[string]string{}
		for n := range names {
			one[n], two[n] = v1, v2
		}
		a, b := RenderShell(s, "", one), RenderShell(s, "", two)
		if a.Command != b.Command {
			t.Fatalf("RenderShell(%q): command depends on the values:\n%q\n%q", s, a.Command, b.Command)
		}
		if len(names) == 0 && a.Command != s {
			t.Fatalf("RenderShell(%q) without tokens = %q", s, a.Command)
		}
		for _, kv := range a.Env {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(k, ShellVarPrefix) || val != v1 {
				t.Fatalf("RenderShell(%q): env entry %q; want %s…=%q", s, kv, ShellVarPrefix, v1)
			}
			if !strings.Contains(a.Command, "${"+k+"}") {
				t.Fatalf("RenderShell(%q): %s is never referenced in %q", s, k, a.Command)
			}
		}
		if len(names) > 0 && len(a.Env) == 0 {
			t.Fatalf("RenderShell(%q): tokens %v but no variables", s, names)
		}
	})
}
