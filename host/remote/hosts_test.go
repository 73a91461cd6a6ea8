package remote

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseFull(t *testing.T) {
	src := `# mine
[hosts.box]
ssh        = "alice@box.example:2222"
identity   = "/keys/id_ed25519"
ssh_config = "/keys/config"
home       = "/srv/binky/alice"
binky      = "/usr/local/bin/binky"
repos      = { "acme" = "/srv/src/acme" }

[hosts.alias]
ssh = "buildbox"

[hosts.v6]
ssh = "bob@[::1]:22"
`
	f, err := Parse("hosts.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Hosts["box"]
	if h.User != "alice" || h.Addr != "box.example" || h.Port != 2222 || h.Home != "/srv/binky/alice" || h.Binky != "/usr/local/bin/binky" || h.Repos["acme"] != "/srv/src/acme" {
		t.Fatalf("box = %+v", h)
	}
	if a := f.Hosts["alias"]; a.Destination() != "buildbox" || a.Port != 0 {
		t.Fatalf("alias = %+v", a)
	}
	if v := f.Hosts["v6"]; v.Addr != "::1" || v.Port != 22 || v.Destination() != "bob@::1" {
		t.Fatalf("v6 = %+v", v)
	}
	if got := strings.Join(f.Names(), ","); got != "alias,box,v6" {
		t.Fatalf("names %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"[hosts.box]\nssh = \"a@b\"\nidentiy = \"/k\"\n", `hosts.toml:3: hosts.box: unknown key "identiy" (did you mean identity?)`},
		{"[hosts.box]\nhome = \"/h\"\n", `hosts.toml:1: hosts.box has no ssh destination`},
		{"[hosts.box]\nssh = 22\n", `hosts.toml:2: hosts.box.ssh must be a string, not an integer`},
		{"[hosts.box]\nssh = \"-oProxyCommand=x\"\n", `hosts.toml:2: hosts.box.ssh: an ssh destination may not start with -`},
		{"[hosts.box]\nssh = \"a@b:99999\"\n", `hosts.toml:2: hosts.box.ssh: port "99999" is not a number from 1 to 65535`},
		{"[hosts.box]\nssh = \"a b\"\n", `may not hold spaces`},
		{"[hosts.box]\nssh = \"a@b\"\nhome = \"srv\"\n", `hosts.toml:3: hosts.box.home: "srv" is not absolute`},
		{"[hosts.box]\nssh = \"a@b\"\nbinky = \"binky\"\n", `hosts.toml:3: hosts.box.binky: "binky" is not absolute`},
		{"[hosts.any]\nssh = \"a@b\"\n", `hosts.toml:1: "any" cannot name a host`},
		{"[hosts.Box]\nssh = \"a@b\"\n", `is not a host name`},
		{"[host.box]\nssh = \"a@b\"\n", `hosts.toml:1: unknown table or key "host"`},
		{"[hosts.box]\nssh = \"a@b\"\nssh = \"c\"\n", `hosts.toml:3: not valid TOML`},
		{"[hosts.box]\nssh = \"a@b\"\nrepos = { \"Acme\" = \"/x\" }\n", `is not a project name`},
		{"[hosts.box]\nssh = \"a@b:1:2\"\n", `brackets`},
		{"[hosts]\nbox = 1\n", `hosts.box must be a table`},
		{"x = " + strings.Repeat("[", 20) + strings.Repeat("]", 20) + "\n", `hosts.toml:1: nested deeper than 8 levels`},
	} {
		_, err := Parse("hosts.toml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestLoadMissingAndSaveRoundTrip(t *testing.T) {
	home := t.TempDir()
	f, err := Load(home)
	if err != nil || len(f.Hosts) != 0 {
		t.Fatalf("missing file: %v %v", f, err)
	}
	f.Hosts["box"] = &Host{Name: "box", SSH: "alice@box:22", Home: "/srv/a \"q\"", Repos: map[string]string{"acme": "/src/acme"}}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(home, FileName))
	if err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) { // Windows has no Unix modes
		t.Fatalf("mode %v %v", st, err)
	}
	g, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	h := g.Hosts["box"]
	if h.SSH != "alice@box:22" || h.Port != 22 || h.Home != "/srv/a \"q\"" || h.Repos["acme"] != "/src/acme" {
		t.Fatalf("round trip: %+v", h)
	}
	if _, err := g.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "binky host add nope") {
		t.Fatalf("lookup: %v", err)
	}
}

func TestCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows' OpenSSH has no multiplexing: no Control options")
	}
	home := t.TempDir()
	h := &Host{Name: "box", SSH: "alice@box.example:2222", User: "alice", Addr: "box.example", Port: 2222, Identity: "/k/id", SSHConfig: "/k/cfg"}
	argv, err := h.Command(home, "/opt/binky", "--home", "/srv/it's", "system", "dial-stdio")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(argv, " ")
	cp := h.ControlPath(home)
	want := "ssh -F /k/cfg -i /k/id -p 2222 -T -o ControlMaster=auto -o ControlPath=" + cp + " -o ControlPersist=10m -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o ConnectTimeout=20 -- alice@box.example /opt/binky --home '/srv/it'\\''s' system dial-stdio"
	if got != want {
		t.Fatalf("argv\n got %s\nwant %s", got, want)
	}
	// A session with a terminal (run -t), and one that may not prompt.
	argv, err = h.command(home, true, []string{"-o", "BatchMode=yes"}, "binky", "system", "exec")
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(argv, " ")
	want = "ssh -F /k/cfg -i /k/id -p 2222 -tt -o LogLevel=ERROR -o ControlMaster=auto -o ControlPath=" + cp + " -o ControlPersist=10m -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o ConnectTimeout=20 -o BatchMode=yes -- alice@box.example binky system exec"
	if got != want {
		t.Fatalf("argv with a terminal\n got %s\nwant %s", got, want)
	}
	if st, err := os.Stat(filepath.Dir(cp)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("control dir: %v %v", st, err)
	}
	// A long home moves the sockets to a short directory.
	long := filepath.Join(home, strings.Repeat("x", 120))
	if p := h.ControlPath(long); len(p) > maxControlPath || strings.HasPrefix(p, long) {
		t.Fatalf("long home's control path %s (%d bytes)", p, len(p))
	}
	other := *h
	other.SSH = "bob@box.example:2222"
	if other.ControlPath(home) == cp {
		t.Fatal("two destinations share a control path")
	}
}

func TestHello(t *testing.T) {
	w, v, err := ParseHello(strings.TrimSuffix(Hello(3, "binky 1.2.3 (commit x)"), "\n"))
	if err != nil || w != 3 || v != "binky 1.2.3 (commit x)" {
		t.Fatalf("ParseHello = %d %q %v", w, v, err)
	}
	for _, bad := range []string{"", "binky 1.2.3", "binky-remote wire=x version=v", "binky-remote version=v"} {
		if _, _, err := ParseHello(bad); err == nil {
			t.Errorf("ParseHello(%q) accepted", bad)
		}
	}
	e := &IncompatibleError{Host: "box", LocalWire: 1, RemoteWire: 2, Local: "binky 1.0", Remote: "binky 2.0"}
	if s := e.Error(); !strings.Contains(s, "binky 1.0") || !strings.Contains(s, "binky 2.0") {
		t.Errorf("IncompatibleError names not both: %s", s)
	}
}
