package names

import "testing"

func TestWorktreeAmong(t *testing.T) {
	worlds := map[string]string{} // name → branch
	held := func(n string) (string, bool) { b, ok := worlds[n]; return b, ok }
	tests := []struct {
		name, branch string
		branches     []string
		worlds       map[string]string
		want         string
	}{
		{"folded alone", "feat/one", []string{"main", "feat/one"}, nil, "feat-one"},
		{"unchanged", "feat-one", []string{"feat-one"}, nil, "feat-one"},
		{"folded beside a branch that folds alike", "feat/one", []string{"feat/one", "feat-one"}, nil, "feat-one-" + branchHash("feat/one")},
		{"unchanged beside a folded branch", "feat-one", []string{"feat/one", "feat-one"}, nil, "feat-one"},
		{"second after the first took the name", "feat-one", []string{"feat/one", "feat-one"}, map[string]string{"feat-one": "feat/one"}, "feat-one-" + branchHash("feat-one")},
		{"its own world", "feat/one", nil, map[string]string{"feat-one": "feat/one"}, "feat-one"},
		{"upper case", "Feat/One", nil, nil, "feat-one"},
		{"hash-shaped fold", "fix/a-abcdef", nil, nil, Worktree("fix/a-abcdef")},
		{"empty fold", "///", nil, nil, Worktree("///")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(worlds)
			for k, v := range tt.worlds {
				worlds[k] = v
			}
			if got := WorktreeAmong(tt.branch, tt.branches, held); got != tt.want {
				t.Errorf("WorktreeAmong(%q) = %q; want %q", tt.branch, got, tt.want)
			}
			if got := WorktreeAmong(tt.branch, tt.branches, held); !IsWorktree(got) {
				t.Errorf("WorktreeAmong(%q) = %q is not a worktree name", tt.branch, got)
			}
		})
	}
}
