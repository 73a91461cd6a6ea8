package dotenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/binkyhq/binky/host/safefile"
)

// MaxSize bounds an env file (1 MiB, as a binky.toml): a bigger one is
// refused unread.
const MaxSize = 1 << 20

// ReadFile parses the env file at path. Only a regular file is read (a
// symlink to one is fine): a FIFO, device, socket or directory is refused
// without blocking ("env_file /dev/zero is a character device, not a
// regular file"), and so is a file over MaxSize ("env_file .env is larger
// than 1048576 bytes"); both errors wrap a *safefile.Error. A file that
// cannot be opened gives the *fs.PathError, wrapped.
func ReadFile(path string) (map[string]string, error) {
	b, err := safefile.ReadRegular(path, MaxSize)
	if err != nil {
		var se *safefile.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("env_file %w", err)
		}
		return nil, fmt.Errorf("read env file: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("env file %s: %w", path, err)
	}
	return m, nil
}

// Parse reads KEY=value lines: blank lines and # comments are skipped, an
// optional leading "export " is dropped, values may be single-quoted
// (literal), double-quoted (with \n \t \" \\ escapes) or bare (trailing " #…"
// comment and surrounding space removed).
func Parse(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validKey(key) {
			return nil, fmt.Errorf("line %d: want KEY=value", n)
		}
		v, err := value(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", n, key, err)
		}
		out[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		case c == '.' && i > 0:
		default:
			return false
		}
	}
	return true
}

func value(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch v[0] {
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated single quote")
		}
		return v[1 : 1+end], nil
	case '"':
		var sb strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\' && i+1 < len(v):
				i++
				switch v[i] {
				case 'n':
					sb.WriteByte('\n')
				case 't':
					sb.WriteByte('\t')
				case 'r':
					sb.WriteByte('\r')
				default:
					sb.WriteByte(v[i])
				}
			case c == '"':
				return sb.String(), nil
			default:
				sb.WriteByte(c)
			}
		}
		return "", fmt.Errorf("unterminated double quote")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), nil
}

// Quote renders s as a single-quoted POSIX shell word: safe to eval whatever
// it holds.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Format renders m as sorted KEY='value' lines.
func Format(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		sb.WriteString(k + "=" + Quote(m[k]) + "\n")
	}
	return sb.String()
}
