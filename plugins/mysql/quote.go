package mysqladapter

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxIdent is MySQL's limit on a database, table, column, view, trigger or
// routine name, in characters.
const maxIdent = 64

// quoteIdent returns name as a backtick-quoted MySQL identifier, the
// backticks inside it doubled. It refuses what no server accepts as a name:
// the empty string, more than 64 characters, invalid UTF-8, NUL, characters
// outside the Basic Multilingual Plane, and a trailing space.
func quoteIdent(name string) (string, error) {
	if err := checkIdent(name); err != nil {
		return "", err
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`", nil
}

func checkIdent(name string) error {
	switch {
	case name == "":
		return errors.New("an identifier cannot be empty")
	case !utf8.ValidString(name):
		return fmt.Errorf("identifier %q is not valid UTF-8", name)
	case utf8.RuneCountInString(name) > maxIdent:
		return fmt.Errorf("identifier %q is longer than %d characters", name, maxIdent)
	case strings.HasSuffix(name, " "):
		return fmt.Errorf("identifier %q ends with a space", name)
	}
	for _, r := range name {
		if r == 0 {
			return fmt.Errorf("identifier %q holds a NUL", name)
		}
		if r > 0xFFFF {
			return fmt.Errorf("identifier %q holds %U, outside the Basic Multilingual Plane", name, r)
		}
	}
	return nil
}

// qualified is `db`.`name`.
func qualified(db, name string) (string, error) {
	d, err := quoteIdent(db)
	if err != nil {
		return "", err
	}
	n, err := quoteIdent(name)
	if err != nil {
		return "", err
	}
	return d + "." + n, nil
}

// quoteList quotes each name and joins them with ", ".
func quoteList(names []string) (string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		q, err := quoteIdent(n)
		if err != nil {
			return "", err
		}
		out[i] = q
	}
	return strings.Join(out, ", "), nil
}

// quoteString returns s as a single-quoted SQL string literal, the quotes
// inside it doubled. It refuses a backslash and a NUL, whose meaning
// depends on sql_mode (NO_BACKSLASH_ESCAPES), rather than escape them one
// way, and invalid UTF-8. It is for the statements that take no parameters
// (ALTER DATABASE … COMMENT).
func quoteString(s string) (string, error) {
	switch {
	case !utf8.ValidString(s):
		return "", fmt.Errorf("string %q is not valid UTF-8", s)
	case strings.ContainsAny(s, "\\\x00"):
		return "", fmt.Errorf("string %q holds a backslash or a NUL", s)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
}
