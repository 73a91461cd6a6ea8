package elasticsearch

import (
	"net/http"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

func putIndex(s *slice, name string) httpx.Request {
	return httpx.Request{Method: http.MethodPut, URL: s.ep.URL(nil, name)}
}

func failT(err error) error { return httpx.Fail("op", "", err, hints) }

func TestCheckPrefix(t *testing.T) {
	for _, ok := range []string{"acme_main-", "a1_b-"} {
		if err := checkPrefix(ok); err != nil {
			t.Errorf("checkPrefix(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-", "*-", "a*-", "a,b-", "a-b-", "acme_main", "a?-", "A_b-", "-a-"} {
		if err := checkPrefix(bad); err == nil {
			t.Errorf("checkPrefix(%q) passed; want it refused", bad)
		}
	}
}

func TestDeletable(t *testing.T) {
	got, err := deletable("acme_main-", []string{"acme_main-a", "acme_main-b", "acme_main-a"})
	if err != nil || strings.Join(got, " ") != "acme_main-a acme_main-b" {
		t.Errorf("deletable = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"acme_main_x-a"}, {"acme_main-"}, {"acme_main-*"}, {"acme_main-a,b"}, {"other"}} {
		if got, err := deletable("acme_main-", bad); err == nil {
			t.Errorf("deletable(%q) = %v; want an error", bad, got)
		}
	}
}

// FuzzDestroyTargets: whatever the slice name and whatever a server lists,
// destroy deletes only concrete names under that slice's prefix, and never
// a name under another slice's prefix.
func FuzzDestroyTargets(f *testing.F) {
	f.Add("acme_main", "acme_main-a,acme_main-b")
	f.Add("acme_main", "acme_main_x-a")
	f.Add("a_b", "*,a_b-*,_all")
	f.Add("Feat/x y", "feat-x-y-1-a")
	f.Fuzz(func(t *testing.T, rawSlice, listing string) {
		slice := rawSlice
		if !names.IsSlice(slice) {
			slice = names.Slice("p", names.Worktree(rawSlice))
		}
		prefix := names.IndexPrefix(slice)
		if err := checkPrefix(prefix); err != nil {
			t.Fatalf("slice %q: its prefix %q is refused: %v", slice, prefix, err)
		}
		listed := strings.Split(listing, "\n")
		got, err := deletable(prefix, listed)
		if err != nil {
			return
		}
		for _, n := range got {
			if !strings.HasPrefix(n, prefix) || len(n) == len(prefix) || strings.ContainsAny(n, "*?,") || strings.HasPrefix(n, "-") {
				t.Fatalf("prefix %q: would delete %q", prefix, n)
			}
			// No other slice owns it: the part before the first '-' is the slice.
			if owner, _, _ := strings.Cut(n, "-"); owner != slice {
				t.Fatalf("prefix %q: would delete %q, which belongs to %q", prefix, n, owner)
			}
		}
	})
}

// FuzzConfig: whatever the admin URL and index list, target fails with
// code invalid without a piece of the password of sdk.MinScrub bytes, or
// the address resolve answers parses back through the adapter's own
// parser to the same endpoint and credentials, and every index is a valid
// name under the prefix.
func FuzzConfig(f *testing.F) {
	f.Add("http://elastic:S3cr3t/9@127.0.0.1:9200", "events,users", `{"number_of_shards":1}`)
	f.Add("https://u:p%40ss@es.example/prefix?x=1", "logs", "{")
	f.Add("http://u:abc#def@h", "Up,*", "")
	f.Fuzz(func(t *testing.T, admin, list, settings string) {
		ix := map[string]any{}
		for _, n := range strings.Split(list, ",") {
			if settings != "" {
				ix[n] = map[string]any{"settings": settings}
			} else {
				ix[n] = map[string]any{}
			}
		}
		s, err := target(&sdk.Target{Slice: "acme_main", AdminURL: admin, Config: map[string]any{KeyIndices: ix}})
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid (%v)", sdk.CodeOf(err), err)
			}
			msg := httpx.Fail("provision elasticsearch slice", admin, err, hints).Error()
			for _, p := range sdk.AdminPasswords(admin) {
				if q := leaked(msg, p); q != "" {
					t.Fatalf("error %q shows %q of the password", msg, q)
				}
			}
			return
		}
		for _, i := range s.indices {
			if full := s.prefix + i.Name; !strings.HasPrefix(full, "acme_main-") || strings.ContainsAny(i.Name, "*?,/ ") {
				t.Fatalf("index %q accepted", full)
			}
		}
		back, err := httpx.ParseAdminURL(address(admin), example)
		if err != nil {
			t.Fatalf("address %q does not parse back: %v", address(admin), err)
		}
		if back.Base.String() != s.ep.Base.String() || back.User != s.ep.User || back.Password != s.ep.Password {
			t.Fatalf("address %q reads back as %s", address(admin), back.Base)
		}
	})
}

// leaked returns a piece of pw of sdk.MinScrub bytes that msg holds
// outside its masks, or "". Pieces holding 'x' are skipped: next to a
// mask they may be its own letters.
func leaked(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			if p := pw[i : i+sdk.MinScrub]; !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
