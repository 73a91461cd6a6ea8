//go:build !windows

package events

import "os"

// appendLine writes b at the end of f: f is opened with O_APPEND, so one
// write lands whole at the end, whichever process appends.
func appendLine(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}
