package cmdshell

// Line is the command line that runs command under cmd.exe: the command is
// placed between the outer quotes /s strips, unchanged.
func Line(command string) string {
	return `cmd.exe /d /s /v:on /c "` + command + `"`
}

// Args is the same command as an argument list, for display and for code
// that records a command as argv; running it must go through Line.
func Args(command string) []string {
	return []string{"cmd.exe", "/d", "/s", "/v:on", "/c", command}
}
