package remote

import (
	"net"
	"regexp"
	"strconv"
	"strings"
)

// loopbackPort finds host:port pairs on the loopback in a coordinate
// (a URL, a DSN, "host:port"): 127.0.0.1, localhost or [::1].
// The first group is what stands before the name, so the "localhost" of
// a *.localhost name is not taken for one.
var loopbackPort = regexp.MustCompile(`(?i)(^|[^a-z0-9.\-])(127\.0\.0\.1|localhost|\[::1\]):([0-9]{1,5})\b`)

// localhostName finds a *.localhost name with its optional scheme and
// port.
var localhostName = regexp.MustCompile(`(?i)\b(https?://)?((?:[a-z0-9-]+\.)+localhost)(:[0-9]{1,5})?\b`)

// LoopbackPorts are the loopback ports a coordinate names: what must be
// forwarded for it to answer on another machine.
func LoopbackPorts(s string) []int {
	var out []int
	for _, m := range loopbackPort.FindAllStringSubmatch(s, -1) {
		if n, err := strconv.Atoi(m[3]); err == nil && n > 0 && n < 65536 {
			out = append(out, n)
		}
	}
	return out
}

// Rewrite makes a host's coordinate one that answers on this machine: a
// *.localhost name goes to the local proxy, and a loopback port with a
// forward goes to the forward's local port. An https:// name stays https
// on the proxy's TLS port (tlsPort, left out when 443) when the local
// proxy serves https (tlsPort not 0), else becomes http; any other name
// goes to proxyPort (left out when 80). A coordinate with a loopback port
// that has no forward is left as it was (and found false): nothing here
// answers for it.
func Rewrite(s string, fwd map[int]int, proxyPort, tlsPort int) (string, bool) {
	ok := true
	s = localhostName.ReplaceAllStringFunc(s, func(m string) string {
		sub := localhostName.FindStringSubmatch(m)
		scheme, name := sub[1], sub[2]
		if strings.EqualFold(name, "localhost") {
			return m
		}
		port, def := proxyPort, 80
		if strings.EqualFold(scheme, "https://") {
			if tlsPort != 0 {
				port, def = tlsPort, 443
			} else {
				scheme = "http://"
			}
		}
		if port == 0 || port == def {
			return scheme + name
		}
		return scheme + name + ":" + strconv.Itoa(port)
	})
	s = loopbackPort.ReplaceAllStringFunc(s, func(m string) string {
		sub := loopbackPort.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[3])
		local, has := fwd[n]
		if !has {
			ok = false
			return m
		}
		return sub[1] + net.JoinHostPort("127.0.0.1", strconv.Itoa(local))
	})
	return s, ok
}
