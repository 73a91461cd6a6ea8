//go:build unix

package adapter

import (
	"io/fs"
	"strings"
)

// adapterName returns the adapter name of a directory entry: the part of an
// executable's file name after binky-adapter-.
func adapterName(file string, mode fs.FileMode) (string, bool) {
	if !mode.IsRegular() || mode.Perm()&0o111 == 0 {
		return "", false
	}
	name, ok := strings.CutPrefix(file, Prefix)
	return name, ok && validName(name)
}
