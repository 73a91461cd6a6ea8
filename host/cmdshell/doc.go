// Package cmdshell owns how binky runs a command string on Windows: through
// `cmd.exe /d /s /v:on /c "…"`, with the command line handed to
// CreateProcess as written (SysProcAttr.CmdLine), so Go's argv quoting,
// which cmd.exe does not understand, never touches it. /d skips AutoRun
// commands from the registry, /s takes everything between the outer quotes
// verbatim, and /v:on turns on delayed expansion, through which token values
// arrive (tokens.RenderCmd renders ${…} as !BINKY_TOKEN_…!). Every child
// gets CREATE_NO_WINDOW and a process group of its own.
//
// Line is pure and builds everywhere; Command exists on Windows only. On
// Unix the same role is `sh -c` (each caller's _unix.go sibling).
package cmdshell
