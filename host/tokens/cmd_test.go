package tokens

import (
	"fmt"
	"testing"
)

func TestRenderCmd(t *testing.T) {
	coords := map[string]string{
		"api.port":      "41001",
		"worktree.path": `C:\Users\First Last\x`,
		"env.A":         "v",
		"env.a":         "w",
	}
	tests := []struct {
		name, in, want string
		env            []string
	}{
		{"no tokens", "server --port 8080", "server --port 8080", nil},
		{"unknown only", "echo ${HOME} %PATH%", "echo ${HOME} %PATH%", nil},
		{"unquoted", "server --port ${self.port}", `server --port "!BINKY_TOKEN_SELF_PORT!"`, []string{"BINKY_TOKEN_SELF_PORT=41001"}},
		{"quoted", `server --port "${self.port}"`, `server --port "!BINKY_TOKEN_SELF_PORT!"`, []string{"BINKY_TOKEN_SELF_PORT=41001"}},
		{"inside a quoted word", `cd /d "${worktree.path}\web"`, `cd /d "!BINKY_TOKEN_WORKTREE_PATH!\web"`, []string{`BINKY_TOKEN_WORKTREE_PATH=C:\Users\First Last\x`}},
		{"mid word", `app --url=${api.port}/x`, `app --url="!BINKY_TOKEN_API_PORT!"/x`, []string{"BINKY_TOKEN_API_PORT=41001"}},
		{"escaped quote does not open", `echo ^" ${env.A}`, `echo ^" "!BINKY_TOKEN_ENV_A!"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"caret before token dropped", `echo ^${env.A}`, `echo "!BINKY_TOKEN_ENV_A!"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"caret inside quotes is literal", `echo "^${env.A}"`, `echo "^!BINKY_TOKEN_ENV_A!"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"repeated token, one variable", "${env.A}${env.A}", `"!BINKY_TOKEN_ENV_A!""!BINKY_TOKEN_ENV_A!"`, []string{"BINKY_TOKEN_ENV_A=v"}},
		{"folding collision numbered", "${env.A} ${env.a}", `"!BINKY_TOKEN_ENV_A!" "!BINKY_TOKEN_ENV_A_2!"`, []string{"BINKY_TOKEN_ENV_A=v", "BINKY_TOKEN_ENV_A_2=w"}},
		{"operators stay the command's", `a ${env.A} && b "${env.A}" | c`, `a "!BINKY_TOKEN_ENV_A!" && b "!BINKY_TOKEN_ENV_A!" | c`, []string{"BINKY_TOKEN_ENV_A=v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderCmd(tt.in, "api", coords)
			if got.Command != tt.want {
				t.Errorf("command = %s; want %s", got.Command, tt.want)
			}
			if fmt.Sprint(got.Env) != fmt.Sprint(tt.env) {
				t.Errorf("env = %q; want %q", got.Env, tt.env)
			}
		})
	}
}

// TestRenderCmdValueIndependent: the command depends on which tokens were
// rendered, never on their values, so no value can reach cmd's parser.
func TestRenderCmdValueIndependent(t *testing.T) {
	in := `app --a ${env.V} --b "${env.V}" ^${env.V} x${env.V}y`
	want := RenderCmd(in, "", map[string]string{"env.V": "plain"}).Command
	for _, v := range hostileCmd {
		got := RenderCmd(in, "", map[string]string{"env.V": v})
		if got.Command != want {
			t.Errorf("value %q: command = %s; want %s", v, got.Command, want)
		}
		if len(got.Env) != 1 || got.Env[0] != "BINKY_TOKEN_ENV_V="+v {
			t.Errorf("value %q: env = %q", v, got.Env)
		}
	}
}

// hostileCmd: each would run a command, redirect, split an argument, or
// expand a variable if cmd.exe parsed it.
var hostileCmd = []string{
	"", " ", "plain", "two words", "a&echo PWNED>pwned", "a|echo PWNED", "a&&echo PWNED", "a||echo PWNED",
	"<in", ">pwned", "^", "^^", "a^&b", "%PATH%", "%%", "!PATH!", "!", "(", ")", "a)&echo PWNED>pwned&(",
	`C:\Users\First Last`, "semi;colon", "comma,x", "eq=x", "tab\tz", "*", "?", "%~dp0", "%1",
}

func FuzzRenderCmd(f *testing.F) {
	f.Add(`app --port "${self.port}" ${env.V}`, "x")
	f.Add(`echo ^"${env.V}^" "${env.V}`, `a"b`)
	f.Fuzz(func(t *testing.T, s, v string) {
		got := RenderCmd(s, "api", map[string]string{"api.port": "1", "env.V": v})
		again := RenderCmd(s, "api", map[string]string{"api.port": "1", "env.V": "other"})
		if got.Command != again.Command {
			t.Fatalf("command depends on a value: %q vs %q", got.Command, again.Command)
		}
		for _, e := range got.Env {
			if len(e) < len(ShellVarPrefix) || e[:len(ShellVarPrefix)] != ShellVarPrefix {
				t.Fatalf("env %q lacks the prefix", e)
			}
		}
	})
}
