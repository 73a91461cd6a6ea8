package sqliteadapter

import (
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// maxName bounds a slice name (the host's are at most 63 bytes).
const maxName = 128

// location is where a request's slices live.
type location struct {
	dir string // absolute
}

// locate reads the request's config and data_dir into the directory that
// holds its slices. Only the config key "dir" is known; any other is an
// error, so a typo does not silently put slices elsewhere.
func locate(t *sdk.Target) (location, error) {
	var dir string
	for k, v := range t.Config {
		switch k {
		case "dir":
			s, ok := v.(string)
			if !ok || s == "" {
				return location{}, sdk.Errorf(sdk.CodeInvalid, "config dir must be a non-empty path string, got %T %v", v, v)
			}
			dir = s
		default:
			return location{}, sdk.Errorf(sdk.CodeInvalid, "config key %q is not known to the sqlite adapter (known: dir)", k)
		}
	}
	if t.Project != "" {
		if err := checkName("project", t.Project); err != nil {
			return location{}, err
		}
	}
	switch {
	case dir != "" && filepath.IsAbs(dir):
	case t.DataDir == "":
		return location{}, sdk.Errorf(sdk.CodeInvalid, "the request has no data_dir and config dir %q is not an absolute path; set config dir to an absolute directory", dir)
	case !filepath.IsAbs(t.DataDir):
		return location{}, sdk.Errorf(sdk.CodeInvalid, "the request's data_dir %q is not an absolute path", t.DataDir)
	case dir != "":
		dir = filepath.Join(t.DataDir, dir)
	default:
		dir = filepath.Join(t.DataDir, t.Project)
	}
	return location{dir: filepath.Clean(dir)}, nil
}

// path is the database file of slice, after checking that the name is a
// safe file name.
func (l location) path(slice string) (string, error) {
	if err := checkName("slice", slice); err != nil {
		return "", err
	}
	return filepath.Join(l.dir, slice+".db"), nil
}

// checkName accepts names made of ASCII letters, digits, '_', '-' and '.',
// not starting with '.' or '-' (names starting with '.' are the adapter's
// own temporary files), that are not a Windows device name. That rules out
// separators, "..", NUL and anything a shell or a filesystem treats
// specially.
func checkName(what, name string) error {
	if name == "" {
		return sdk.Errorf(sdk.CodeInvalid, "%s name is empty", what)
	}
	if len(name) > maxName {
		return sdk.Errorf(sdk.CodeInvalid, "%s name is %d bytes; the limit is %d", what, len(name), maxName)
	}
	if name[0] == '.' || name[0] == '-' {
		return sdk.Errorf(sdk.CodeInvalid, "%s name %q must not start with %q", what, name, name[:1])
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return sdk.Errorf(sdk.CodeInvalid, "%s name %q holds %q; use letters, digits, '_', '-' and '.'", what, name, c)
		}
	}
	if strings.Contains(name, "..") {
		return sdk.Errorf(sdk.CodeInvalid, "%s name %q must not contain \"..\"", what, name)
	}
	if reservedOnWindows(name) {
		return sdk.Errorf(sdk.CodeInvalid, "%s name %q is a device name on Windows", what, name)
	}
	return nil
}

// reservedOnWindows reports whether name's first part (up to a '.') is a
// DOS device name (con, nul, com1…), which Windows will not use as a file.
func reservedOnWindows(name string) bool {
	base, _, _ := strings.Cut(strings.ToLower(name), ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && '0' <= base[3] && base[3] <= '9' {
		return true
	}
	return false
}

// slicePath locates a request's directory and its slice's file.
func slicePath(t *sdk.Target) (location, string, error) {
	loc, err := locate(t)
	if err != nil {
		return location{}, "", err
	}
	path, err := loc.path(t.Slice)
	return loc, path, err
}
