package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// hashLen is the number of hex digits of a hash suffix (24 bits).
const hashLen = 6

// branchHash is the hash suffix of a worktree name: the first hashLen hex
// digits of the SHA-256 of the branch exactly as given, so anyone can check
// it with `printf %s "$branch" | sha256sum`.
func branchHash(branch string) string {
	sum := sha256.Sum256([]byte(branch))
	return hex.EncodeToString(sum[:hashLen/2])
}

// digest is the hash suffix of a derived name. Each part is length-prefixed
// so ("ab","c") and ("a","bc") differ, and the first part names the kind of
// name (slice, golden, raw, bucket) so hashes of different kinds never
// answer for each other.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:hashLen/2])
}

// hashTailed reports whether s ends in sep followed by hashLen lowercase hex
// digits: the shape of a hash suffix.
func hashTailed(s string, sep byte) bool {
	n := len(s)
	if n < hashLen+2 || s[n-hashLen-1] != sep {
		return false
	}
	for i := n - hashLen; i < n; i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
