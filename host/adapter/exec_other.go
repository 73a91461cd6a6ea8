//go:build !unix

package adapter

import (
	"io/fs"
	"strings"
)

// adapterName returns the adapter name of a directory entry: the part of an
// executable's file name after binky-adapter-. On Windows an executable is a
// .exe file.
func adapterName(file string, mode fs.FileMode) (string, bool) {
	if !mode.IsRegular() {
		return "", false
	}
	base, ok := strings.CutSuffix(strings.ToLower(file), ".exe")
	if !ok {
		return "", false
	}
	name, ok := strings.CutPrefix(base, Prefix)
	return name, ok && validName(name)
}
