package remote

import "testing"

func TestRewrite(t *testing.T) {
	fwd := map[int]int{5432: 4101, 5001: 4100}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"http://web.feat.acme.localhost:8080", "http://web.feat.acme.localhost:8123", true},
		{"https://web.feat.acme.localhost", "http://web.feat.acme.localhost:8123", true},
		{"postgres://u:pw@127.0.0.1:5432/acme_feat?sslmode=disable", "postgres://u:pw@127.0.0.1:4101/acme_feat?sslmode=disable", true},
		{"http://127.0.0.1:5001", "http://127.0.0.1:4100", true},
		{"redis://localhost:6379/0", "redis://localhost:6379/0", false},
		{"sqlite:///srv/x.db", "sqlite:///srv/x.db", true},
	} {
		got, ok := Rewrite(c.in, fwd, 8123, 0)
		if got != c.want || ok != c.ok {
			t.Errorf("Rewrite(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if got, _ := Rewrite("http://web.feat.acme.localhost:8080", fwd, 80, 0); got != "http://web.feat.acme.localhost" {
		t.Errorf("port 80: %q", got)
	}
	// With https served here, an https name keeps its scheme on the TLS
	// port; an http one stays on the http port (in a text of several).
	in := "A=https://web.feat.acme.localhost:8443/x\nB=http://api.feat.acme.localhost:8080\n"
	want := "A=https://web.feat.acme.localhost:9443/x\nB=http://api.feat.acme.localhost:8123\n"
	if got, _ := Rewrite(in, fwd, 8123, 9443); got != want {
		t.Errorf("with https here:\n got %q\nwant %q", got, want)
	}
	if got, _ := Rewrite("https://web.feat.acme.localhost", fwd, 80, 443); got != "https://web.feat.acme.localhost" {
		t.Errorf("port 443: %q", got)
	}
}

func FuzzRewrite(f *testing.F) {
	for _, s := range []string{"http://web.feat.acme.localhost:8080", "postgres://u:pw@127.0.0.1:5432/x", "[::1]:5001", "localhost:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := Rewrite(s, map[int]int{5432: 4101}, 8123, 8443)
		_ = LoopbackPorts(out)
	})
}
