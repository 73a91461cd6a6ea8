package doctor

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
)

// listening returns the TCP ports in LISTEN state, from /proc/net/tcp{,6}.
func listening() ([]int, bool) {
	var out []int
	read := false
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		read = true
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil {
				out = append(out, int(p))
			}
		}
		fh.Close()
	}
	slices.Sort(out)
	return slices.Compact(out), read
}
