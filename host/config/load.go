package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/binkyhq/binky/host/safefile"
)

// FileName is the name of the config file at a repository's root.
const FileName = "binky.toml"

// MaxSize bounds a binky.toml (1 MiB); a bigger file is refused unread.
const MaxSize = 1 << 20

// LoadError says why a file could not be used at all: it cannot be read, is
// too large, or is not TOML. Line and Col are 0 when no position applies.
type LoadError struct {
	File      string
	Line, Col int
	Msg       string
	// Hint says how to fix it, when there is something to say.
	Hint string
	Err  error
}

// Error is "file:line:col: msg (hint)", without the position parts that
// do not apply.
func (e *LoadError) Error() string {
	var s string
	switch {
	case e.Line > 0 && e.Col > 0:
		s = fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		s = fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		s = fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *LoadError) Unwrap() error { return e.Err }

// Diagnostic returns e as an error diagnostic (for --json output).
func (e *LoadError) Diagnostic() Diagnostic {
	return Diagnostic{File: e.File, Line: e.Line, Col: e.Col, Severity: SeverityError, Message: e.Msg, Hint: e.Hint}
}

// Load reads and parses the binky.toml at path. The error is a *LoadError,
// non-nil only when the file cannot be read, is too large or too deeply
// nested, or is not TOML; every other problem is a Diagnostic. The Config
// is usable when !ds.HasErrors().
func Load(path string) (*Config, Diagnostics, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext is Load that gives up when ctx ends, with a *LoadError
// wrapping ctx's error.
func LoadContext(ctx context.Context, path string) (*Config, Diagnostics, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, canceled(path, err)
	}
	data, err := readLimited(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseContext(ctx, path, data)
}

// ReadFile reads the binky.toml at path as Load does: only a regular file
// (a symlink to one is fine; a FIFO, device, socket or directory is refused
// without blocking), at most MaxSize bytes. The error is a *LoadError. The
// daemon reads with it where it parses the text itself (ParseContext).
func ReadFile(path string) ([]byte, error) {
	return readLimited(path)
}

func readLimited(path string) ([]byte, error) {
	data, err := safefile.ReadRegular(path, MaxSize)
	if err == nil {
		return data, nil
	}
	var se *safefile.Error
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return nil, tooLarge(path)
	case errors.As(err, &se) && se.Kind == "a directory":
		return nil, &LoadError{File: path, Msg: "cannot read: is a directory", Hint: "give the binky.toml inside it", Err: err}
	case errors.As(err, &se):
		return nil, &LoadError{File: path, Msg: "cannot read: " + se.Reason(), Hint: "binky reads a binky.toml only from a regular file; a symlink to one is fine", Err: err}
	}
	return nil, &LoadError{File: path, Msg: "cannot read: " + cause(err), Err: err}
}

func tooLarge(name string) *LoadError {
	return &LoadError{File: name, Msg: fmt.Sprintf("file is larger than %d bytes; a binky.toml is a short hand-written file", MaxSize), Err: errTooLarge}
}

var errTooLarge = errors.New("file too large")

// cause drops the path a *fs.PathError repeats.
func cause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse decodes and validates data as the binky.toml called name (the name
// is used in diagnostics). See Load for the results.
func Parse(name string, data []byte) (*Config, Diagnostics, error) {
	return ParseContext(context.Background(), name, data)
}

// ParseContext is Parse that gives up when ctx ends. Data over MaxSize,
// nested deeper than MaxDepth or with more than MaxEntries keys and array
// elements is refused
// before it is decoded, so a decode costs at most tens of MB and well under
// a second; when ctx ends first, ParseContext returns at once and that
// bounded decode finishes in the background.
func ParseContext(ctx context.Context, name string, data []byte) (*Config, Diagnostics, error) {
	if len(data) > MaxSize {
		return nil, nil, tooLarge(name)
	}
	src := string(data)
	if le := checkLimits(name, stripBOM(src)); le != nil {
		return nil, nil, le
	}
	if ctx.Done() == nil {
		return parse(name, src)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, canceled(name, err)
	}
	type result struct {
		cfg *Config
		ds  Diagnostics
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.cfg, r.ds, r.err = parse(name, src)
		done <- r
	}()
	select {
	case r := <-done:
		return r.cfg, r.ds, r.err
	case <-ctx.Done():
		return nil, nil, canceled(name, ctx.Err())
	}
}

func canceled(name string, err error) *LoadError {
	return &LoadError{File: name, Msg: "stopped reading: " + err.Error(), Err: err}
}

// parse decodes and validates src, which is within the limits.
func parse(name, src string) (cfg *Config, ds Diagnostics, err error) {
	raw := map[string]any{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = &LoadError{File: name, Msg: fmt.Sprintf("not valid TOML: decoder failed: %v", r)}
			}
		}()
		_, derr := toml.Decode(src, &raw)
		if derr != nil {
			err = tomlError(name, derr)
		}
	}()
	if err != nil {
		return nil, nil, err
	}
	d := &decoder{file: name, pos: indexPositions(stripBOM(src))}
	cfg = d.config(raw)
	validate(d, cfg)
	footguns(d, cfg)
	admissionFootguns(d, cfg)
	if nativeCmdExe {
		cmdExeFootguns(d, cfg) // cmdexe.go
	}
	sortDiagnostics(d.diags)
	return cfg, d.diags, nil
}

func tomlError(name string, err error) *LoadError {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		le := &LoadError{File: name, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "not valid TOML: " + oneLine(pe.Message), Err: err}
		if strings.Contains(pe.Message, "already been defined") {
			le.Hint = "a key or table may appear once: merge or remove the repeat"
		}
		return le
	}
	return &LoadError{File: name, Msg: "not valid TOML: " + oneLine(err.Error()), Err: err}
}

// stripBOM drops a byte-order mark the way the toml parser does, so that
// positions agree with its own.
func stripBOM(s string) string {
	switch {
	case len(s) >= 3 && s[:3] == "\xef\xbb\xbf":
		return s[3:]
	case len(s) >= 2 && (s[:2] == "\xff\xfe" || s[:2] == "\xfe\xff"):
		return s[2:]
	}
	return s
}

// Find returns the path of the binky.toml in dir or in the nearest parent
// that has one. The search stops at the repository root (a directory holding
// .git) and at the filesystem root.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find %s from %s: %w", FileName, dir, err)
	}
	for d := abs; ; {
		p := filepath.Join(d, FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return "", fmt.Errorf("find %s: none in %s or its parents up to the repository root %s; create one at the repository root", FileName, abs, d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("find %s: none in %s or any parent; run binky inside a repository that has one, or give its path", FileName, abs)
		}
		d = parent
	}
}
