package names

import (
	"strings"
	"testing"
)

func TestHostFrom(t *testing.T) {
	v := HostVars{Service: "web", Worktree: "feat-login", Branch: "Feat/Login", Project: "acme", User: "Ann.Lee"}
	tests := []struct {
		name, tmpl, apex, want string
	}{
		{"default equals Host", "", "", Host("web", "feat-login", "acme")},
		{"default spelled out", DefaultHostTemplate, "localhost", "web.feat-login.acme.localhost"},
		{"apex", "", "test", "web.feat-login.acme.test"},
		{"flat", "{service}-{worktree}.{project}", "", "web-feat-login.acme.localhost"},
		{"branch folded", "{service}.{branch}", "test", "web.feat-login.test"},
		{"user", "{service}.{worktree}.{user}", "dev.internal", "web.feat-login.ann-lee.dev.internal"},
		{"literal", "app.{worktree}", "", "app.feat-login.localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HostFrom(tt.tmpl, tt.apex, v)
			if err != nil || got != tt.want {
				t.Errorf("HostFrom(%q, %q) = %q, %v; want %q", tt.tmpl, tt.apex, got, err, tt.want)
			}
		})
	}
	long := HostVars{Service: "web", Worktree: strings.Repeat("a", 40), Project: strings.Repeat("b", 40)}
	if h, err := HostFrom("{worktree}-{project}", "", long); err == nil {
		t.Errorf("a label of 81 bytes gave %q; want an error", h)
	}
	if h, err := HostFrom("xy--{worktree}", "", v); err == nil {
		t.Errorf("a label with -- in places 3-4 gave %q; want an error", h)
	}
}

func TestCheckHostTemplate(t *testing.T) {
	for _, good := range []string{"{service}.{worktree}.{project}", "{service}-{branch}", "x", "{user}.dev"} {
		if err := CheckHostTemplate(good); err != nil {
			t.Errorf("CheckHostTemplate(%q) = %v; want nil", good, err)
		}
	}
	for _, bad := range []string{"", ".{service}", "{service}.", "{service}..x", "{svc}", "{service", "service}", "Web", "a_b", "{service}.*"} {
		if err := CheckHostTemplate(bad); err == nil {
			t.Errorf("CheckHostTemplate(%q) = nil; want an error", bad)
		}
	}
}

func TestCheckApex(t *testing.T) {
	for _, good := range []string{"localhost", "test", "dev.internal", "home.arpa"} {
		if err := CheckApex(good); err != nil {
			t.Errorf("CheckApex(%q) = %v; want nil", good, err)
		}
	}
	for _, bad := range []string{"", ".test", "test.", "Test", "-x", "a..b", "a_b"} {
		if err := CheckApex(bad); err == nil {
			t.Errorf("CheckApex(%q) = nil; want an error", bad)
		}
	}
}

func FuzzHostFrom(f *testing.F) {
	f.Add("{service}.{worktree}.{project}", "test", "feat/x", "ann")
	f.Add("{service}-{branch}", "localhost", "", "")
	f.Fuzz(func(t *testing.T, tmpl, apex, branch, user string) {
		h, err := HostFrom(tmpl, apex, HostVars{Service: "web", Worktree: Worktree(branch), Branch: branch, Project: "acme", User: user})
		if err != nil {
			return
		}
		if len(h) > 253 {
			t.Fatalf("HostFrom gave %d bytes", len(h))
		}
		for _, l := range strings.Split(h, ".") {
			if !IsLabel(l) {
				t.Fatalf("HostFrom(%q, %q) = %q: label %q", tmpl, apex, h, l)
			}
		}
	})
}
