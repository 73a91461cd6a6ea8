//go:build windows

package events

import (
	"context"
	"os"
	"time"

	"github.com/binkyhq/binky/host/internal/winlock"
)

// appendLine writes b at the end of f, whole, whoever else appends. f is
// opened with O_APPEND, which Go turns into FILE_APPEND_DATA access
// without FILE_WRITE_DATA: Windows then writes each WriteFile at the end
// of the file as one piece, but that is a file-system behaviour no
// document promises for every file system (a network share, Wine's
// emulation of it, which tore lines between processes), so each append
// also holds the file's lock (LockFileEx on one byte at 4 GiB, past any
// content: host/internal/winlock), which every process appending to
// events.log takes. When the lock cannot be had within a few seconds (a
// process stopped while holding it), the line is written anyway: a torn
// line is skipped by readers, a lost event is not seen at all.
func appendLine(f *os.File, b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if winlock.Lock(ctx, f) == nil {
		defer winlock.Unlock(f)
	}
	_, err := f.Write(b)
	return err
}
