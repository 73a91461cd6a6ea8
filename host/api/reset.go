package api

import "strings"

// ResetSummary says what a reset of w (of one service, when service is
// not "") did to its slices: those cloned from a golden template are back
// to their golden state, the others (a Redis keyspace, a slice without
// clone_from) were made anew by provision, migrate and seed. The CLI and
// MCP print it after "<project>/<worktree> reset: ".
func ResetSummary(w World, service string) string {
	var golden, fresh []string
	for _, sv := range w.Services {
		if sv.Kind != "adapter" || (service != "" && sv.Name != service) {
			continue
		}
		if sv.Clone != "" {
			golden = append(golden, sv.Name)
		} else {
			fresh = append(fresh, sv.Name)
		}
	}
	var parts []string
	if len(golden) > 0 {
		parts = append(parts, strings.Join(golden, ", ")+" back to the golden state")
	}
	if len(fresh) > 0 {
		parts = append(parts, strings.Join(fresh, ", ")+" made anew (no golden template: provisioned, migrated and seeded)")
	}
	if len(parts) == 0 {
		return "its slices made anew"
	}
	return strings.Join(parts, "; ")
}
