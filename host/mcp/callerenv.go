package mcp

import (
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/tokens"
)

// callerEnv returns the caller's values (looked up with lookup) of exactly
// the ${env.NAME} names the binky.toml governing dir references, and nothing
// else. A directory without a readable config forwards nothing; the daemon
// then reports the config problem itself.
func callerEnv(dir string, lookup func(string) (string, bool)) map[string]string {
	path, err := config.Find(dir)
	if err != nil {
		return nil
	}
	cfg, _, err := config.Load(path)
	if err != nil || cfg == nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range tokens.EnvNames(cfg) {
		if v, ok := lookup(n); ok {
			out[n] = v
		}
	}
	return out
}
