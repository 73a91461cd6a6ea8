package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/dotenv"
	"github.com/binkyhq/binky/host/safefile"
)

// EnvFilePath is where binky reads an env_file written as p: an absolute
// p as written; a relative one in the worktree root when it is there, else
// in the repository's main worktree main (an env file is usually
// git-ignored, so a new worktree has none of its own). When neither has
// it, the worktree's path, which errors then name. main may be "" (not
// known, or root is the main worktree).
func EnvFilePath(p, root, main string) string {
	if filepath.IsAbs(p) {
		return p
	}
	here := filepath.Join(root, p)
	if main == "" || filepath.Clean(main) == filepath.Clean(root) {
		return here
	}
	if _, err := os.Lstat(here); !errors.Is(err, fs.ErrNotExist) {
		return here
	}
	there := filepath.Join(main, p)
	if _, err := os.Lstat(there); err == nil {
		return there
	}
	return here
}

// EnvFileRoots says where CheckEnvFiles looks for env files, as binky up
// does (EnvFilePath).
type EnvFileRoots struct {
	// Root is the worktree the binky.toml is in.
	Root string
	// Main is the repository's main worktree ("" when unknown or Root).
	Main string
	// Ignored reports whether git ignores a path relative to Root; nil
	// when it cannot be told.
	Ignored func(rel string) bool
}

// CheckEnvFiles is what `binky check` adds for env_file: every env_file the
// config names (the project's and each service's) is read as binky up
// reads it (EnvFilePath: in the worktree, else in the main worktree), with
// host/dotenv. One that is not a regular file (a FIFO, a device such as
// /dev/zero, a socket, a directory), is larger than dotenv.MaxSize or does
// not parse is an error naming the file; one that does not exist is a
// warning (up refuses it, but an env file is often made per checkout). A
// relative env_file git ignores is a warning that explains the lookup: a
// new worktree has no copy of it and reads the main worktree's. A path
// holding a ${token} is not checked. name is the file name the
// diagnostics carry.
func CheckEnvFiles(name string, at EnvFileRoots, cfg *Config) Diagnostics {
	if cfg == nil {
		return nil
	}
	root := at.Root
	type use struct {
		key  []string // where env_file is written
		what string   // how the message names the key
		path string
	}
	var uses []use
	if p := cfg.Project.EnvFile; p != "" {
		uses = append(uses, use{[]string{"project", "env_file"}, "project.env_file", p})
	}
	for _, n := range cfg.Order {
		if s := cfg.Services[n]; s != nil && s.EnvFile != "" {
			uses = append(uses, use{[]string{"services", n, "env_file"}, "services." + n + ".env_file", s.EnvFile})
		}
	}
	var ds Diagnostics
	warnedIgnored := map[string]bool{}
	for _, u := range uses {
		if strings.Contains(u.path, "${") || filepath.IsAbs(u.path) || at.Ignored == nil || warnedIgnored[u.path] || !at.Ignored(u.path) {
			continue
		}
		warnedIgnored[u.path] = true
		where := "the main worktree's"
		if at.Main != "" {
			where = "the main worktree's (" + filepath.Join(at.Main, u.path) + ")"
		}
		ds = append(ds, Diagnostic{File: name, Line: cfg.Line(u.key...), Severity: SeverityWarning,
			Message: fmt.Sprintf("%s: env_file %s is git-ignored, so a new worktree has none of its own: binky up reads the worktree's %s when it exists, else %s", u.what, u.path, u.path, where),
			Hint:    "fine when every worktree may share the main worktree's values; for values of its own, create " + u.path + " in the worktree or list it in [worktree] copy (copied before env files are read)"})
	}
	seen := map[string]error{}
	for _, u := range uses {
		if strings.Contains(u.path, "${") {
			continue
		}
		full := EnvFilePath(u.path, root, at.Main)
		err, done := seen[full]
		if !done {
			_, err = dotenv.ReadFile(full)
			seen[full] = err
		}
		if err == nil {
			continue
		}
		// The file as the user finds it: next to the binky.toml shown.
		shown := u.path
		if !filepath.IsAbs(shown) && full == filepath.Join(root, u.path) {
			shown = filepath.Join(filepath.Dir(name), shown)
		} else {
			shown = full
		}
		d := Diagnostic{File: name, Line: cfg.Line(u.key...), Severity: SeverityError}
		var se *safefile.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Severity = SeverityWarning
			d.Message = fmt.Sprintf("%s: env_file %s does not exist: binky up refuses until it does", u.what, shown)
			d.Hint = "create it (binky up looks in the worktree, then in the main worktree), or remove env_file"
		case errors.As(err, &se):
			d.Message = fmt.Sprintf("%s: env_file %s %s", u.what, shown, se.Reason())
			if errors.Is(err, safefile.ErrTooLarge) {
				d.Hint = "an env file is short KEY=value lines"
			} else {
				d.Hint = "binky reads an env_file only from a regular file; a symlink to one is fine"
			}
		default:
			msg := err.Error()
			// dotenv says "env file <full>: line 3: …": name the file as shown.
			msg = strings.TrimPrefix(msg, "env file "+full+": ")
			msg = strings.TrimPrefix(msg, "read env file: ")
			d.Message = oneLine(fmt.Sprintf("%s: env_file %s: %s", u.what, shown, msg))
		}
		ds = append(ds, d)
	}
	return ds
}
