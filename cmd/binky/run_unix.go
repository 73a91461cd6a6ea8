//go:build !windows

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/binkyhq/binky/host/api"
)

// watchResize sends the terminal fd's new size to the command's terminal
// at each SIGWINCH, until ctx ends.
func watchResize(ctx context.Context, fd int, in *api.InputWriter) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				if w, h, err := term.GetSize(fd); err == nil {
					if in.Send(api.Input{Size: &api.Winsize{Rows: uint16(h), Cols: uint16(w)}}) != nil {
						return
					}
				}
			}
		}
	}()
}
