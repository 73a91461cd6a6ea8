package names

// fold lowercases ASCII letters and turns every run of other bytes (any
// byte outside [a-zA-Z0-9], so each byte of a multi-byte UTF-8 character)
// into one sep, dropping runs at either end. The result is empty or matches
// [a-z0-9]+(sep[a-z0-9]+)*.
func fold(s string, sep byte) string {
	b := make([]byte, 0, len(s))
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			pending = true
			continue
		}
		if pending && len(b) > 0 {
			b = append(b, sep)
		}
		pending = false
		b = append(b, c)
	}
	return string(b)
}

// cut shortens s to at most n bytes and drops any sep it then ends with. s
// is ASCII, so a byte cut never splits a character.
func cut(s string, n int, sep byte) string {
	if len(s) > n {
		s = s[:n]
	}
	for len(s) > 0 && s[len(s)-1] == sep {
		s = s[:len(s)-1]
	}
	return s
}

// replaceByte returns s with every old byte replaced by new.
func replaceByte(s string, old, new byte) string {
	b := []byte(s)
	for i, c := range b {
		if c == old {
			b[i] = new
		}
	}
	return string(b)
}
