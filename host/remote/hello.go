package remote

import (
	"fmt"
	"strconv"
	"strings"
)

// The hello is the first line a host's binky writes on a session Binky
// opens (system dial-stdio, system exec), before anything else:
//
//	binky-remote wire=1 version=binky 1.2.3 (commit …)
//
// The caller reads it before the daemon's frames or the verb's output, and
// refuses a host whose wire version is not its own (api.WireVersion),
// naming both binkys. It costs no round trip: it comes with the session.
const helloPrefix = "binky-remote "

// Hello is the line a host's binky of wire version wire and version
// version (cli.Version) writes, newline included.
func Hello(wire int, version string) string {
	return fmt.Sprintf("%swire=%d version=%s\n", helloPrefix, wire, version)
}

// ParseHello reads a hello line (without its newline).
func ParseHello(line string) (wire int, version string, err error) {
	line = strings.TrimRight(line, "\r\n")
	rest, ok := strings.CutPrefix(line, helloPrefix)
	if !ok {
		return 0, "", fmt.Errorf("not a binky hello: %.120q", line)
	}
	w, v, ok := strings.Cut(rest, " version=")
	ws, ok2 := strings.CutPrefix(w, "wire=")
	if !ok || !ok2 {
		return 0, "", fmt.Errorf("not a binky hello: %.120q", line)
	}
	wire, err = strconv.Atoi(ws)
	if err != nil {
		return 0, "", fmt.Errorf("not a binky hello: %.120q", line)
	}
	return wire, v, nil
}

// IncompatibleError refuses a host whose binky speaks another wire version.
type IncompatibleError struct {
	Host                  string
	LocalWire, RemoteWire int
	Local, Remote         string
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("host %s runs %s (wire %d), which this %s (wire %d) cannot drive: install the same binky release on both machines",
		e.Host, e.Remote, e.RemoteWire, e.Local, e.LocalWire)
}
