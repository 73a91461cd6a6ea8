package doctor

import (
	"context"
	"crypto/x509"
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/certs"
	"github.com/binkyhq/binky/sdk/names"
)

// checkApex says, for each apex other than localhost a registered world's
// project sets (apex = "test"), how one of its names resolves: through an
// /etc/hosts entry or a resolver (a local DNS server answering the zone),
// and warns when it does not reach loopback; and, for a project with
// https, whether the zone's local CA exists and is trusted.
func checkApex(ctx context.Context, e *Env) []Finding {
	ws, err := worlds(e)
	if err != nil {
		return []Finding{skip("the registry cannot be read: %v", err)}
	}
	type zone struct {
		https bool
		host  string // a name a world holds there, else a probe name
	}
	apexes := map[string]*zone{}
	held := heldHosts(e)
	for _, w := range ws {
		cfg := worldConfig(ctx, w)
		if cfg == nil || cfg.Project.Apex == "" || cfg.Project.Apex == names.DefaultApex {
			continue
		}
		a := cfg.Project.Apex
		z := apexes[a]
		if z == nil {
			z = &zone{host: "binky-doctor-probe." + a}
			apexes[a] = z
		}
		z.https = z.https || cfg.Project.HTTPS
		for _, h := range held {
			if strings.HasSuffix(h, "."+a) {
				z.host = h
				break
			}
		}
	}
	if len(apexes) == 0 {
		return []Finding{ok("every world's names are under .localhost")}
	}
	var out []Finding
	for _, a := range slices.Sorted(maps.Keys(apexes)) {
		z := apexes[a]
		addrs, err := net.DefaultResolver.LookupHost(ctx, z.host)
		how := "the resolver (a DNS server for ." + a + ")"
		if inEtcHosts(z.host) {
			how = "an /etc/hosts entry"
		}
		switch {
		case err == nil && loopbackOnly(addrs):
			out = append(out, ok("%s resolves to loopback (%s) through %s", z.host, strings.Join(addrs, ", "), how))
		case err == nil:
			out = append(out, warn(apexFix(e.GOOS, a, z.host), "%s resolves to %s, not loopback: the proxy does not get its requests", z.host, strings.Join(addrs, ", ")))
		default:
			out = append(out, warn(apexFix(e.GOOS, a, z.host), "%s does not resolve (%v): names under .%s reach nothing until a resolver entry maps them to 127.0.0.1", z.host, err, a))
		}
		if z.https {
			out = append(out, zoneCA(e, a))
		}
	}
	return out
}

// zoneCA says whether the local CA that certifies names under apex exists
// and is trusted.
func zoneCA(e *Env, apex string) Finding {
	zone, private := names.PrivateZone(apex)
	if !private {
		return warn(`set apex = "test" (or internal, example, home.arpa)`, "https names under .%s get no certificate: binky certifies only localhost, test, example, internal and home.arpa", apex)
	}
	ca, err := certs.LoadZoneCA(filepath.Join(e.Home, "certs"), zone)
	if errors.Is(err, fs.ErrNotExist) {
		return warn("binky trust --zone "+zone, "no local CA for .%s yet: the first https request makes one, which browsers do not trust until binky trust", zone)
	}
	if err != nil {
		return warn("binky trust --zone "+zone, "the local CA for .%s cannot be read: %v", zone, err)
	}
	if _, err := ca.Cert.Verify(x509.VerifyOptions{}); err != nil {
		return warn("binky trust --zone "+zone, "the local CA for .%s (%s) is not trusted by this machine: browsers will warn on its https URLs", zone, ca.CertPath)
	}
	return ok("the local CA for .%s is present and trusted (%s)", zone, ca.CertPath)
}

// heldHosts is every hostname the registry records as held (schema 10 and
// later), sorted; none when it cannot be read.
func heldHosts(e *Env) []string {
	conn, err := openRO(registryPath(e))
	if err != nil {
		return nil
	}
	defer conn.Close()
	var out []string
	_ = sqlitex.ExecuteTransient(conn, "SELECT host FROM hosts ORDER BY host;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			out = append(out, stmt.ColumnText(0))
			return nil
		},
	})
	return out
}

// inEtcHosts reports whether name has a line of its own in /etc/hosts.
func inEtcHosts(name string) bool {
	b, err := os.ReadFile(hostsFile())
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) > 1 && slices.Contains(f[1:], name) {
			return true
		}
	}
	return false
}

func hostsFile() string {
	if root := os.Getenv("SystemRoot"); root != "" {
		return filepath.Join(root, "System32", "drivers", "etc", "hosts")
	}
	return "/etc/hosts"
}

// apexFix is how to make names under apex resolve to loopback on goos.
func apexFix(goos, apex, host string) string {
	switch goos {
	case "linux":
		return "add 127.0.0.1 " + host + " (one line per name) to /etc/hosts, or have a local dnsmasq answer the zone: address=/" + apex + "/127.0.0.1 (with systemd-resolved: DNS=127.0.0.1 Domains=~" + apex + ")"
	case "darwin":
		return "add 127.0.0.1 " + host + " to /etc/hosts, or run dnsmasq with address=/" + apex + "/127.0.0.1 and create /etc/resolver/" + apex + " holding: nameserver 127.0.0.1"
	case "windows":
		return `add 127.0.0.1 ` + host + ` to C:\Windows\System32\drivers\etc\hosts (one line per name)`
	}
	return "add 127.0.0.1 " + host + " to /etc/hosts (one line per name)"
}
