package remote

import (
	"strings"
	"testing"
)

// FuzzParse: no input panics Parse or makes it accept a host ssh would
// misread, and what Save writes parses back to the same hosts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[hosts.box]\nssh = \"alice@box.example:22\"\nidentity = \"/k\"\nhome = \"/srv/h\"\nbinky = \"/b\"\nrepos = { \"acme\" = \"/src\" }\n",
		"[hosts.a]\nssh = \"[::1]:2\"\n[hosts.b]\nssh = \"alias\"\n",
		"[hosts]\nbox.ssh = \"x@y\"\n",
		"[hosts.box]\nssh = '''\n-o'''\n",
		"x = [[[[{a=[1]}]]]]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("hosts.toml", data)
		if err != nil {
			return
		}
		for name, h := range file.Hosts {
			if CheckName(name) != nil || h.SSH == "" || h.Destination()[0] == '-' {
				t.Fatalf("accepted bad host %q: %+v", name, h)
			}
			if _, _, _, err := SplitDestination(h.SSH); err != nil {
				t.Fatalf("accepted %q: %v", h.SSH, err)
			}
			again, err := Parse("hosts.toml", []byte(h.render()))
			if err != nil {
				t.Fatalf("render of %+v does not parse: %v\n%s", h, err, h.render())
			}
			g := again.Hosts[name]
			if g.SSH != h.SSH || g.Home != h.Home || g.Binky != h.Binky || len(g.Repos) != len(h.Repos) {
				t.Fatalf("round trip %+v -> %+v", h, g)
			}
		}
	})
}

// FuzzParseHello: the first line a host sends never panics the reader,
// and what it accepts renders back to itself.
func FuzzParseHello(f *testing.F) {
	f.Add("binky-remote wire=1 version=binky 1.0 (commit abc, go1.26 linux/amd64)")
	f.Add("binky-remote wire=-1 version=")
	f.Add("bash: binky: command not found")
	f.Fuzz(func(t *testing.T, line string) {
		w, v, err := ParseHello(line)
		if err != nil {
			return
		}
		if again, v2, err := ParseHello(Hello(w, v)); err != nil || again != w || v2 != strings.TrimRight(v, "\r\n") && v2 != v {
			t.Fatalf("%q: %d %q -> %d %q %v", line, w, v, again, v2, err)
		}
	})
}
