package world

import (
	"github.com/binkyhq/binky/host/browserlog"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/proxy"
	"github.com/binkyhq/binky/host/registry"
)

// A world's browser log ([agents] browser_logs, docs/agents.md) is the
// engine's as its service logs are: browser.jsonl in the world's log
// directory, gone with it at remove. The proxy takes what the pages post
// and hands it here (BrowserLogs, which the daemon gives the proxy); up
// marks the log, so verify can count what the pages reported since.

// BrowserLogs is the proxy's sink for what the pages of the worlds report.
func (e *Engine) BrowserLogs() proxy.BrowserSink { return (*browserSink)(e) }

type browserSink Engine

// BrowserLog records the entries of r's world: the pages' within the
// world's rate, the proxy's notes as they are.
func (s *browserSink) BrowserLog(r proxy.Route, entries []browserlog.Entry) {
	e := (*Engine)(s)
	dir := e.logDir(r.Project, r.Worktree)
	var pages []browserlog.Entry
	for _, en := range entries {
		if en.Kind == browserlog.KindNote {
			if err := e.browser.Note(dir, en); err != nil {
				e.log.Warn("browser log note not recorded", "project", r.Project, "worktree", r.Worktree, "error", err)
			}
			continue
		}
		pages = append(pages, en)
	}
	if _, err := e.browser.Append(dir, pages); err != nil {
		e.log.Warn("browser log entries not recorded", "project", r.Project, "worktree", r.Worktree, "error", err)
	}
}

// markBrowserUp marks an up in the browser log of a world whose project
// keeps one.
func (e *Engine) markBrowserUp(cfg *config.Config, project, worktree string) {
	if cfg == nil || !cfg.Agents.BrowserLogs {
		return
	}
	if err := e.browser.MarkUp(e.logDir(project, worktree)); err != nil {
		e.log.Warn("browser log: up not marked", "project", project, "worktree", worktree, "error", err)
	}
}

// browserErrors is what a verify says of the browser log: how many errors
// the pages reported since the last up; nil when the project keeps none.
func (e *Engine) browserErrors(cfg *config.Config, rec *registry.Worktree) *int {
	if !cfg.Agents.BrowserLogs {
		return nil
	}
	n, err := browserlog.CountSinceUp(e.logDir(rec.Project, rec.Name))
	if err != nil {
		e.log.Warn("browser log not read", "project", rec.Project, "worktree", rec.Name, "error", err)
	}
	return &n
}

var _ proxy.BrowserSink = (*browserSink)(nil)
