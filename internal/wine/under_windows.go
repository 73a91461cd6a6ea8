//go:build windows

package wine

import "golang.org/x/sys/windows"

// Under reports whether this Windows process runs under Wine: Wine's ntdll
// exports wine_get_version, Windows' does not.
func Under() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
