//go:build !windows

package api

import (
	"errors"
	"syscall"
)

func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}
