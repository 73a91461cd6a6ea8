// Package testlog hands a test an io.Writer that puts each write into the
// test's own log (t.Log), for the loggers of the code under test: their
// lines show up beside the failure they explain, and only then. Product
// code never imports it.
package testlog

import (
	"io"
	"strings"
	"testing"
)

// Writer writes each write to t's log, its trailing newline dropped.
func Writer(t testing.TB) io.Writer { return writer{t} }

type writer struct{ t testing.TB }

func (w writer) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
