package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/dotenv"
	"github.com/binkyhq/binky/host/safefile"
)

// CheckEnvFiles is what `binky check` adds for env_file: every env_file the
// config names (the project's and each service's) is read as binky up
// reads it, relative to root (the worktree, where the binky.toml lives),
// with host/dotenv. One that is not a regular file (a FIFO, a device such
// as /dev/zero, a socket, a directory), is larger than dotenv.MaxSize or
// does not parse is an error naming the file; one that does not exist is a
// warning (up refuses it, but an env file is often made per checkout). A
// path holding a ${token} is not checked. name is the file name the
// diagnostics carry.
func CheckEnvFiles(name, root string, cfg *Config) Diagnostics {
	if cfg == nil {
		return nil
	}
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
	seen := map[string]error{}
	var ds Diagnostics
	for _, u := range uses {
		if strings.Contains(u.path, "${") {
			continue
		}
		full := u.path
		if !filepath.IsAbs(full) {
			full = filepath.Join(root, full)
		}
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
		if !filepath.IsAbs(shown) {
			shown = filepath.Join(filepath.Dir(name), shown)
		}
		d := Diagnostic{File: name, Line: cfg.Line(u.key...), Severity: SeverityError}
		var se *safefile.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Severity = SeverityWarning
			d.Message = fmt.Sprintf("%s: env_file %s does not exist: binky up refuses until it does", u.what, shown)
			d.Hint = "create it (in new worktrees too: [worktree] copy can bring it along), or remove env_file"
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
