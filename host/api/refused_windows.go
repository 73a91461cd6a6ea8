//go:build windows

package api

import (
	"errors"
	"syscall"
)

func isRefused(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.Errno(10061)) // WSAECONNREFUSED
}
