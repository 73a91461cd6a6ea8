package api

import "strings"

// EnvMap turns an environment list (os.Environ()) into the map the Env
// fields carry. A later entry for a name wins, as it does for exec.
func EnvMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}
