package remote

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/binkyhq/binky/host/config"
)

// FileName is the hosts file inside BINKY_HOME. It is the user's own: it
// is never committed and never read from a repository.
const FileName = "hosts.toml"

// MaxSize bounds hosts.toml (256 KiB); a bigger file is refused unread.
const MaxSize = 256 << 10

// maxDepth bounds how deeply brackets and braces nest (a hosts.toml needs
// three: [hosts.box] with repos = {…}); deeper is refused before decoding,
// which keeps the decoder's cost small on any input.
const maxDepth = 8

// Any is the --host value that places a world on the first host that
// admits it; no host may be called so.
const Any = "any"

// hostKeys are the keys a [hosts.<name>] table may hold.
var hostKeys = []string{"ssh", "identity", "ssh_config", "home", "binky", "repos"}

var (
	hostNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`) })
	projectNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
)

// Host is one [hosts.<name>] table.
type Host struct {
	// Name is the table's name, what --host takes.
	Name string
	// SSH is the destination as written: "user@host:port", "host", or a
	// Host alias of the ssh config.
	SSH string
	// User, Addr and Port are SSH split: Port is 0 when not given (ssh's
	// own default or the ssh config decides).
	User, Addr string
	Port       int
	// Identity is the private key (ssh -i), ~ expanded; "" for ssh's own.
	Identity string
	// SSHConfig is another ssh config file (ssh -F), ~ expanded.
	SSHConfig string
	// Home is BINKY_HOME on the host; "" for the host's default.
	Home string
	// Binky is the host's binky; "" to find it on the host's PATH.
	Binky string
	// Repos maps a project name to its clone on the host, recorded on the
	// first push.
	Repos map[string]string
}

// File is a parsed hosts.toml.
type File struct {
	// Path is where it was read from (or will be written).
	Path  string
	Hosts map[string]*Host
}

// Error is a problem with hosts.toml, positioned when a line applies.
type Error struct {
	File string
	Line int
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Path is hosts.toml's path in home.
func Path(home string) string { return filepath.Join(home, FileName) }

// Load reads home's hosts.toml. A missing file is an empty File, not an
// error. The error is an *Error.
func Load(home string) (*File, error) {
	p := Path(home)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Path: p, Hosts: map[string]*Host{}}, nil
	}
	if err != nil {
		return nil, &Error{File: p, Msg: "cannot read: " + cause(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{File: p, Msg: "cannot read: " + cause(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{File: p, Msg: "cannot read: not a regular file", Hint: "hosts.toml is a plain file the user edits"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &Error{File: p, Msg: "cannot read: " + cause(err)}
	}
	return Parse(p, data)
}

func cause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse reads data as the hosts.toml called name. Every problem is an
// *Error naming the line: unknown tables and keys (with the nearest known
// one), values of the wrong type, and values ssh would misread.
func Parse(name string, data []byte) (*File, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("larger than %d bytes; hosts.toml is a short hand-written file", MaxSize)}
	}
	src := string(data)
	if !utf8.ValidString(src) {
		return nil, &Error{File: name, Msg: "not valid TOML: not UTF-8 text"}
	}
	if line := tooDeep(src); line > 0 {
		return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	raw := map[string]any{}
	var derr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				derr = fmt.Errorf("decoder failed: %v", r)
			}
		}()
		_, derr = toml.Decode(src, &raw)
	}()
	if derr != nil {
		var pe toml.ParseError
		if errors.As(derr, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Msg: "not valid TOML: " + oneLine(pe.Message)}
		}
		return nil, &Error{File: name, Msg: "not valid TOML: " + oneLine(derr.Error())}
	}
	lines := indexLines(src)
	f := &File{Path: name, Hosts: map[string]*Host{}}
	for k, v := range raw {
		if k != "hosts" {
			return nil, &Error{File: name, Line: lines.find("", k), Msg: fmt.Sprintf("unknown table or key %q", k), Hint: "hosts.toml holds [hosts.<name>] tables only"}
		}
		hosts, ok := v.(map[string]any)
		if !ok {
			return nil, &Error{File: name, Line: lines.find("", k), Msg: "hosts must be a table", Hint: "write [hosts.<name>] tables"}
		}
		for _, hn := range sortedKeys(hosts) {
			h, err := decodeHost(name, lines, hn, hosts[hn])
			if err != nil {
				return nil, err
			}
			f.Hosts[hn] = h
		}
	}
	return f, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func decodeHost(file string, lines lineIndex, name string, v any) (*Host, error) {
	table := "hosts." + name
	at := func(key string) int { return lines.find(table, key) }
	bad := func(key, hint, format string, args ...any) error {
		return &Error{File: file, Line: at(key), Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	if err := CheckName(name); err != nil {
		return nil, &Error{File: file, Line: at(""), Msg: err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad("", "write [hosts."+name+"] with ssh = \"user@host\"", "hosts.%s must be a table", name)
	}
	h := &Host{Name: name}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(hostKeys, k) {
			hint := "known keys: " + strings.Join(hostKeys, ", ")
			if s := config.Suggest(k, hostKeys); s != "" {
				hint = "did you mean " + s + "?"
			}
			return nil, bad(k, hint, "hosts.%s: unknown key %q", name, k)
		}
		if k == "repos" {
			rm, ok := m[k].(map[string]any)
			if !ok {
				return nil, bad(k, `write repos = { "<project>" = "/path/on/host" }`, "hosts.%s.repos must be a table of project = path", name)
			}
			h.Repos = map[string]string{}
			for _, p := range sortedKeys(rm) {
				s, ok := rm[p].(string)
				if !ok {
					return nil, bad(k, "a path on the host, in quotes", "hosts.%s.repos.%s must be a string", name, p)
				}
				if !projectNameRE().MatchString(p) {
					return nil, bad(k, "project names are lower-case letters, digits and -", "hosts.%s.repos: %q is not a project name", name, p)
				}
				if err := checkRemotePath(s); err != nil {
					return nil, bad(k, "", "hosts.%s.repos.%s: %v", name, p, err)
				}
				h.Repos[p] = s
			}
			continue
		}
		s, ok := m[k].(string)
		if !ok {
			return nil, bad(k, "put the value in quotes", "hosts.%s.%s must be a string, not %s", name, k, typeName(m[k]))
		}
		var err error
		switch k {
		case "ssh":
			h.SSH = s
			h.User, h.Addr, h.Port, err = SplitDestination(s)
		case "identity":
			h.Identity, err = localPath(s)
		case "ssh_config":
			h.SSHConfig, err = localPath(s)
		case "home":
			h.Home, err = s, checkRemotePath(s)
		case "binky":
			h.Binky, err = s, checkBinky(s)
		}
		if err != nil {
			return nil, bad(k, "", "hosts.%s.%s: %v", name, k, err)
		}
	}
	if h.SSH == "" {
		return nil, bad("", `add ssh = "user@host" (or a Host alias of your ssh config)`, "hosts.%s has no ssh destination", name)
	}
	return h, nil
}

// CheckName says why name cannot name a host, or nil.
func CheckName(name string) error {
	if name == Any {
		return fmt.Errorf("%q cannot name a host: --host any means the first host that admits", name)
	}
	if !hostNameRE().MatchString(name) {
		return fmt.Errorf("%q is not a host name: use lower-case letters, digits, - and _ (at most 63)", name)
	}
	return nil
}

// SplitDestination reads "user@host:port", "user@host", "host", "[v6]:port"
// or an ssh config alias. Anything ssh could read as an option (a leading
// -), or holding spaces or control characters, is refused.
func SplitDestination(s string) (user, addr string, port int, err error) {
	if s == "" {
		return "", "", 0, errors.New("empty ssh destination")
	}
	if strings.HasPrefix(s, "-") {
		return "", "", 0, errors.New("an ssh destination may not start with - (ssh would read it as an option)")
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\'' || r == '"' || r == '\\'
	}) >= 0 {
		return "", "", 0, errors.New("an ssh destination may not hold spaces, quotes, backslashes or control characters")
	}
	if strings.Contains(s, "://") {
		return "", "", 0, errors.New("write user@host:port, not a URL")
	}
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, rest = rest[:i], rest[i+1:]
		if user == "" {
			return "", "", 0, errors.New("empty user before @")
		}
		if strings.HasPrefix(user, "-") {
			return "", "", 0, errors.New("a user may not start with -")
		}
	}
	addr = rest
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", "", 0, errors.New("unclosed [ in the address")
		}
		addr = rest[1:end]
		tail := rest[end+1:]
		if tail != "" {
			if !strings.HasPrefix(tail, ":") {
				return "", "", 0, fmt.Errorf("unexpected %q after ]", tail)
			}
			if port, err = parsePort(tail[1:]); err != nil {
				return "", "", 0, err
			}
		}
		if net.ParseIP(addr) == nil {
			return "", "", 0, fmt.Errorf("%q in [ ] is not an IP address", addr)
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		if strings.Count(rest, ":") > 1 {
			return "", "", 0, errors.New("write an IPv6 address in brackets: [addr]:port")
		}
		addr = rest[:i]
		if port, err = parsePort(rest[i+1:]); err != nil {
			return "", "", 0, err
		}
	}
	if addr == "" {
		return "", "", 0, errors.New("no host in the ssh destination")
	}
	if strings.HasPrefix(addr, "-") {
		return "", "", 0, errors.New("a host may not start with -")
	}
	return user, addr, port, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 || s != strconv.Itoa(p) {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return p, nil
}

// localPath checks a path on this machine and expands a leading ~/.
func localPath(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty path (leave the key out instead)")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", errors.New("control characters in a path")
	}
	if strings.HasPrefix(s, "-") {
		return "", errors.New("a path may not start with - (ssh would read it as an option)")
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %v", err)
		}
		return filepath.Join(home, s[1:]), nil
	}
	if strings.HasPrefix(s, "~") {
		return "", errors.New("only ~/ (your own home) is expanded")
	}
	return s, nil
}

// checkRemotePath checks a path on the host: absolute, no control
// characters (it is passed through the host's shell, quoted).
func checkRemotePath(s string) error {
	if s == "" {
		return errors.New("empty path (leave the key out instead)")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errors.New("control characters in a path")
	}
	if !strings.HasPrefix(s, "/") {
		return fmt.Errorf("%q is not absolute: give the full path on the host", s)
	}
	return nil
}

func checkBinky(s string) error {
	if s == "" {
		return errors.New("empty (leave the key out to find binky on the host's PATH)")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errors.New("control characters in a path")
	}
	if !strings.HasPrefix(s, "/") {
		return fmt.Errorf("%q is not absolute: give the full path of binky on the host, or leave the key out to find it on the host's PATH", s)
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Lookup returns the host called name, or an error saying how to add it.
func (f *File) Lookup(name string) (*Host, error) {
	if h, ok := f.Hosts[name]; ok {
		return h, nil
	}
	if err := CheckName(name); err != nil && name != Any {
		return nil, err
	}
	known := "no hosts are configured"
	if len(f.Hosts) > 0 {
		known = "known: " + strings.Join(f.Names(), ", ")
	}
	return nil, fmt.Errorf("no host %q in %s (%s); add it with: binky host add %s user@machine", name, f.Path, known, name)
}

// Names are the hosts' names, sorted.
func (f *File) Names() []string { return sortedKeys(f.Hosts) }
