package client

import "strings"

// MinimalEnv keeps from environ (KEY=VALUE entries, as os.Environ returns)
// only PATH, HOME, TMPDIR, LANG, LANGUAGE and LC_* (plus the few variables
// a process needs to start on Windows). Secrets travel on stdin, never in an
// adapter's environment.
func MinimalEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if keepVar(k) {
			out = append(out, kv)
		}
	}
	return out
}

func keepVar(k string) bool {
	u := strings.ToUpper(k)
	switch u {
	case "PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE":
		return true
	case "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "USERPROFILE", "PATHEXT", "COMSPEC":
		// What a Go or Python binary needs to start and reach the
		// network on Windows.
		return true
	}
	return strings.HasPrefix(u, "LC_")
}

// SetEnv returns env with key set to value, replacing an earlier entry.
func SetEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
