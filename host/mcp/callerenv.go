package mcp

import "github.com/binkyhq/binky/host/api"

// callerEnv is the server's whole environment, which is the agent's: `binky
// mcp` is started by the agent's client. Every tool forwards it, and the
// daemon gives the services, hooks and checks a call starts that
// environment (plus what binky renders), never its own, and resolves
// ${env.NAME} from it.
func (s *Server) callerEnv() map[string]string {
	return api.EnvMap(s.cfg.Environ())
}

// ref names the world a tool acts on, with the caller's environment. A
// worktree name resolves inside project when given, else inside the
// project of the repository the server stands in (repo, or its own
// directory), as on the command line.
func (s *Server) ref(worktree, repo, project string) api.WorldRef {
	return api.WorldRef{Name: worktree, Dir: s.dir(repo), Project: project, Env: s.callerEnv()}
}
