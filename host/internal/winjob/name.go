package winjob

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// namePrefix starts every service job's name (in the global namespace,
// Global\: job_windows.go).
const namePrefix = "binky-"

// maxName bounds a job name (MAX_PATH with room for "Global\"); a longer
// marker gets a hashed name, which Names cannot match by prefix.
const maxName = 240

var escaper = strings.NewReplacer("%", "%25", `\`, "%5C")

// Name is the job name of the processes marked with marker (a service's
// BINKY_SERVICE value): "binky-" and the marker, % and \ escaped (an
// object name cannot hold \). A marker too long for a name is hashed.
func Name(marker string) string {
	n := namePrefix + escaper.Replace(marker)
	if len(n) <= maxName {
		return n
	}
	sum := sha256.Sum256([]byte(marker))
	return namePrefix + "#" + hex.EncodeToString(sum[:16])
}

// MarkerOf is the marker a job name was made from, false when the name is
// not one of Name's or was hashed.
func MarkerOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok || strings.HasPrefix(rest, "#") {
		return "", false
	}
	return strings.NewReplacer("%5C", `\`, "%25", "%").Replace(rest), true
}
