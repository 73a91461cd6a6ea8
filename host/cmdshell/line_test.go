package cmdshell

import "testing"

func TestLine(t *testing.T) {
	if got, want := Line(`app --port "!BINKY_TOKEN_SELF_PORT!"`), `cmd.exe /d /s /v:on /c "app --port "!BINKY_TOKEN_SELF_PORT!""`; got != want {
		t.Errorf("Line = %s; want %s", got, want)
	}
}
