package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// testPEM is a PEM-shaped private key: the armour of an RSA key around
// the base64 of deterministic random bytes, wrapped at 64 columns. It is
// no key at all (no secret material is kept in the repository); the
// redactor sees the same shape.
func testPEM(seed byte, size int) string {
	rng := rand.New(rand.NewChaCha8([32]byte{seed}))
	der := make([]byte, size)
	for i := range der {
		der[i] = byte(rng.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(der)
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for i := 0; i < len(enc); i += 64 {
		b.WriteString(enc[i:min(i+64, len(enc))] + "\n")
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return b.String()
}

// bodyLines are the lines of a PEM key between its armour.
func bodyLines(key string) []string {
	lines := strings.Split(key, "\n")
	return lines[1 : len(lines)-1]
}

// leakedPiece returns a piece of MinLen bytes of one of lines that out
// shows and that innocent (the text around the secret) does not hold, or
// "".
func leakedPiece(out, innocent string, lines []string) string {
	for _, l := range lines {
		for i := 0; i+MinLen <= len(l); i++ {
			g := l[i : i+MinLen]
			if strings.Contains(out, g) && !strings.Contains(innocent, g) {
				return g
			}
		}
	}
	return ""
}

// TestPEMTailWindows: `binky status` shows the last lines of a failed
// service's log; when they begin inside a PEM key, every body line (the
// last one shorter) is masked and the armour and the service's own lines
// stay. The same for windows that begin or end at any byte (a chunk of a
// stream), and for a key written with CRLF line ends.
func TestPEMTailWindows(t *testing.T) {
	t.Parallel()
	key := testPEM(1, 1191) // 1588 base64 characters: the last line has 52
	r := New(key)
	before := "2026-01-02T15:04:05Z starting\nloading key from env:\n"
	after := "\nfatal: key rejected\nexit status 1\n"
	body := bodyLines(key)
	for _, eol := range []string{"\n", "\r\n"} {
		log := before + strings.ReplaceAll(key, "\n", eol) + after
		innocent := before + after
		lines := strings.Split(log, "\n")
		for n := 1; n <= len(lines); n++ {
			window := strings.Join(lines[len(lines)-n:], "\n")
			got := r.String(window)
			if g := leakedPiece(got, innocent, body); g != "" {
				t.Fatalf("eol %q, last %d lines: %q shows %q of the key", eol, n, got, g)
			}
			if n >= 4 && n < len(lines)-2 && !strings.Contains(got, "-----END RSA PRIVATE KEY-----\nfatal: key rejected") {
				t.Errorf("eol %q, last %d lines: %q; want the END armour and the service's lines kept", eol, n, got)
			}
			if n >= 5 && n < len(lines)-2 && strings.Count(got, Mask) != n-4 {
				t.Errorf("eol %q, last %d lines: %q; want each of the %d body lines masked on its own", eol, n, got, n-4)
			}
		}
		if got, want := r.String(log), before+Mask+after; eol == "\n" && got != want {
			t.Errorf("whole log: %q; want %q", got, want)
		}
		// Windows cut anywhere: a chunk of a stream, a tail cut to bytes.
		start := len(before)
		for a := start; a < start+len(key)+len(body)*len(eol); a += 7 {
			for _, size := range []int{5, 40, 64, 65, 200, 2000} {
				window := log[a:min(a+size, len(log))]
				got := r.String(window)
				if g := leakedPiece(got, innocent, body); g != "" {
					t.Fatalf("eol %q, window [%d:+%d] %q shows %q of the key as %q", eol, a, size, window, g, got)
				}
			}
		}
	}
}

// TestPEMArmourAndShortLinesStayPublic: a key's armour and lines that
// carry no secret do not mask the same text elsewhere (a certificate's
// armour, a separator, a short word).
func TestPEMArmourAndShortLinesStayPublic(t *testing.T) {
	t.Parallel()
	key := testPEM(2, 300)
	r := New(key, "user: alice\nab\n------\npass: Zq8-Long-Enough\n  },\n")
	for _, in := range []string{
		"-----BEGIN RSA PRIVATE KEY-----",
		"-----END RSA PRIVATE KEY-----\n",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"------\n",
		"ab cd\n  },\n",
		"END RSA PRIVATE KEY",
	} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q; want it unchanged", in, got)
		}
	}
	// A line long enough to be a secret is masked on its own.
	if got, want := r.String("log: user: alice"), "log: ***"; got != want {
		t.Errorf("String = %q; want %q", got, want)
	}
	if got, want := r.String("pass: Zq8-Long-Enough!"), "***!"; got != want {
		t.Errorf("String = %q; want %q", got, want)
	}
}

func TestFragments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secret string
		want   []string
	}{
		{"single line secret", nil},
		{"-----BEGIN PRIVATE KEY-----\nMIIEvQIB\nabc\n-----END PRIVATE KEY-----\n", []string{"MIIEvQIB"}},
		{"  indented line  \r\n\tsecond\r\n", []string{"indented line", "second"}},
		{"=====\n}},\nok\n####x", []string{"####x"}},
		{`-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\r\nxyz1\n-----END EC PRIVATE KEY-----\n`, []string{"MHcCAQEEIB", "xyz1"}},
		{"real break\nand a literal \\n inside", []string{"real break", `and a literal \n inside`}},
	} {
		got := fragments(tc.secret)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("fragments(%q) = %q; want %q", tc.secret, got, tc.want)
		}
	}
}

// jsonSecret is a multi-line secret with every character JSON encoders
// escape differently.
const jsonSecret = "line one \"quoted\" \\ back/slash\nline <two> & more\tTab\nÜnïcode 😀 line"

// TestJSONEscaped: a secret written inside a JSON string is masked, as
// each common encoder writes it (the outputs below are theirs, verbatim),
// and so is every line of a PEM key inside one.
func TestJSONEscaped(t *testing.T) {
	t.Parallel()
	r := New(jsonSecret)
	goHTML, _ := json.Marshal(jsonSecret)
	var goPlain bytes.Buffer
	enc := json.NewEncoder(&goPlain)
	enc.SetEscapeHTML(false)
	enc.Encode(jsonSecret)
	for _, tc := range []struct{ name, quoted string }{
		{"Go encoding/json", string(goHTML)},
		{"Go encoding/json without HTML escaping", strings.TrimSpace(goPlain.String())},
		// node -e 'console.log(JSON.stringify(s))'
		{"JavaScript JSON.stringify", `"line one \"quoted\" \\ back/slash\nline <two> & more\tTab\nÜnïcode 😀 line"`},
		// python3 -c 'print(json.dumps(s))' (ensure_ascii, the default)
		{"Python json.dumps", `"line one \"quoted\" \\ back/slash\nline <two> & more\tTab\n\u00dcn\u00efcode \ud83d\ude00 line"`},
		{"upper-case \\u hex digits (Java, .NET)", `"line one \"quoted\" \\ back/slash\nline <two> & more\tTab\n\u00DCn\u00EFcode \uD83D\uDE00 line"`},
		// PHP's json_encode by default also escapes '/'.
		{"PHP json_encode", `"line one \"quoted\" \\ back\/slash\nline <two> & more\tTab\n\u00dcn\u00efcode \ud83d\ude00 line"`},
	} {
		in := `{"level":"error","secret":` + tc.quoted + `,"n":1}`
		want := `{"level":"error","secret":"***","n":1}`
		if got := r.String(in); got != want {
			t.Errorf("%s: String(%s) = %s; want %s", tc.name, in, got, want)
		}
	}

	key := testPEM(3, 1191)
	rk := New(key)
	quoted, _ := json.Marshal(map[string]string{"private_key": key})
	if got, want := rk.String(string(quoted)), `{"private_key":"***"}`; got != want {
		t.Errorf("JSON-escaped PEM: %s; want %s", got, want)
	}
	body := bodyLines(key)
	innocent := `{"private_key":""}`
	for a := 0; a < len(quoted); a += 5 {
		for _, size := range []int{6, 70, 300, len(quoted)} {
			window := string(quoted[a:min(a+size, len(quoted))])
			got := rk.String(window)
			if g := leakedPiece(got, innocent, body); g != "" {
				t.Fatalf("window [%d:+%d] of JSON-escaped PEM shows %q: %q", a, size, g, got)
			}
		}
	}
	// The key inside a service-account JSON secret, printed decoded.
	sa := `{"type": "service_account", "private_key": "` + strings.ReplaceAll(key, "\n", `\n`) + `\n", "client_email": "x@example.iam"}`
	rs := New(sa)
	tail := strings.Join(strings.Split(key, "\n")[5:], "\n")
	got := rs.String("loaded key:\n" + tail + "\ndone")
	if g := leakedPiece(got, "loaded key:done", body); g != "" {
		t.Errorf("a JSON secret's PEM printed decoded shows %q: %q", g, got)
	}
}

// urlPassword has every character the encoders below treat differently,
// and non-ASCII.
const urlPassword = "p@ss:/?#[]!$&'()*+,;= %wörd€😀~"

// lowerEscapes lower-cases the hex digits of every %XX in s.
func lowerEscapes(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

// TestPercentEncoders: a password as each common encoder writes it (the
// outputs are theirs, verbatim), with upper- and lower-case hex digits, in
// a URL and alone.
func TestPercentEncoders(t *testing.T) {
	t.Parallel()
	r := New(urlPassword)
	for _, tc := range []struct{ name, enc string }{
		// node -e 'console.log(encodeURIComponent(p))'
		{"JavaScript encodeURIComponent", "p%40ss%3A%2F%3F%23%5B%5D!%24%26'()*%2B%2C%3B%3D%20%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		// node -e 'console.log(encodeURI(p))'
		{"JavaScript encodeURI", "p@ss:/?#%5B%5D!$&'()*+,;=%20%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		// python3 -c 'print(urllib.parse.quote(p))'
		{"Python quote", "p%40ss%3A/%3F%23%5B%5D%21%24%26%27%28%29%2A%2B%2C%3B%3D%20%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		// python3 -c 'print(urllib.parse.quote(p, safe=""))'
		{"Python quote safe=''", "p%40ss%3A%2F%3F%23%5B%5D%21%24%26%27%28%29%2A%2B%2C%3B%3D%20%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		// python3 -c 'print(urllib.parse.quote_plus(p))'
		{"Python quote_plus", "p%40ss%3A%2F%3F%23%5B%5D%21%24%26%27%28%29%2A%2B%2C%3B%3D+%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		{"Go url.QueryEscape", url.QueryEscape(urlPassword)},
		{"Go url.PathEscape", url.PathEscape(urlPassword)},
		{"Go url.PathEscape (verbatim)", "p@ss:%2F%3F%23%5B%5D%21$&%27%28%29%2A+%2C%3B=%20%25w%C3%B6rd%E2%82%AC%F0%9F%98%80~"},
		{"Go url.UserPassword", strings.TrimSuffix(strings.TrimPrefix((&url.URL{Scheme: "x", User: url.UserPassword("u", urlPassword), Host: "h"}).String(), "x://u:"), "@h")},
		{"every byte escaped", strings.ToUpper(regexp.MustCompile(`(..)`).ReplaceAllString(hex.EncodeToString([]byte(urlPassword)), "%$1"))},
	} {
		for _, enc := range []string{tc.enc, lowerEscapes(tc.enc)} {
			for _, around := range [][2]string{
				{"", ""},
				{"https://api.example.com/login?user=bob&password=", "&next=%2Fhome"},
				{`{"url":"postgres://bob:`, `@db:5432/app"}`},
			} {
				in, want := around[0]+enc+around[1], around[0]+Mask+around[1]
				if got := r.String(in); got != want {
					t.Errorf("%s: String(%s) = %s; want %s", tc.name, in, got, want)
				}
			}
		}
	}
	// Escaped text that is no secret stays as it is.
	for _, in := range []string{"a%20b%2Fc", "p%40ss", `"\u003cb\u003e"`, "p+ss+w%C3%B6rd"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q; want it unchanged", in, got)
		}
	}
}

// TestEscapeReadings: a '%' or '\' of a secret may stand for itself or be
// escaped, but one occurrence is read one way.
func TestEscapeReadings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ secret, in, want string }{
		{"100%pure", "x 100%pure y", "x *** y"},
		{"100%pure", "x 100%25pure y", "x *** y"},
		{"100%pure", "x 100%25pure%20 y", "x ***%20 y"},
		{"a%41bcd", "a%41bcd", "***"},
		{"a%41bcd", "a%2541bcd", "***"},
		{"a%41bcd", "aAbcd", "aAbcd"},
		{`C:\new\dir`, `C:\new\dir`, "***"},
		{`C:\new\dir`, `"C:\\new\\dir"`, `"***"`},
		{`C:\new\dir`, `"C:\\new\dir"`, `"C:\\new\dir"`},
		{"a b+c d", "a+b%2Bc+d", "***"},
		{"a b+c d", "a%20b+c%20d", "***"},
		{"Zürich!", `Z\u00fcrich!`, "***"},
		{"Zürich!", `Z%c3%bcrich%21`, "***"},
	} {
		if got := New(tc.secret).String(tc.in); got != tc.want {
			t.Errorf("secret %q: String(%q) = %q; want %q", tc.secret, tc.in, got, tc.want)
		}
	}
}

// TestWriterPEMStream: a PEM key streamed in writes of any size is masked
// as String masks it; a stream that begins inside the key (binky logs -f
// from the last lines) has every body line masked; and the writer never
// writes out a piece of the key before it knows it is one.
func TestWriterPEMStream(t *testing.T) {
	t.Parallel()
	key := testPEM(4, 700)
	r := New(key)
	body := bodyLines(key)
	log := "boot\n" + key + "\nready\n"
	for _, from := range []int{0, len("boot\n") + 40, len("boot\n") + 97, len(log) - 70} {
		in := log[from:]
		want := r.String(in)
		if g := leakedPiece(want, "boot\nready\n", body); g != "" {
			t.Fatalf("from %d: String shows %q: %q", from, g, want)
		}
		for _, step := range []int{1, 3, 64, 65, 1000} {
			var out bytes.Buffer
			w := r.Writer(&out)
			for off := 0; off < len(in); off += step {
				w.Write([]byte(in[off:min(off+step, len(in))]))
				if g := leakedPiece(out.String(), "boot\nready\n", body); g != "" {
					t.Fatalf("from %d, writes of %d: after %d bytes wrote %q of the key: %q", from, step, off+step, g, out.String())
				}
			}
			w.Close()
			if out.String() != want {
				t.Errorf("from %d, writes of %d: Writer = %q; String = %q", from, step, out.String(), want)
			}
		}
	}
	// Flush on a quiet stream that stopped inside the key.
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte(log[:len("boot\n")+100]))
	w.Flush()
	if g := leakedPiece(out.String(), "boot\n", body); g != "" {
		t.Errorf("Flush inside the key wrote %q: %q", g, out.String())
	}
}

// TestMinLenEnforced: no value, line or window piece shorter than MinLen
// is masked.
func TestMinLenEnforced(t *testing.T) {
	t.Parallel()
	r := New("abc", "xy\nzw\nuv", "a%b", "\\n")
	for _, in := range []string{"abc", "xy", "zw uv", "a%b", "a%25b", `\n`, "xy\nzw\nu"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q; want it unchanged", in, got)
		}
	}
	r = New("first-line\nsecond-line")
	// A window holding 3 bytes of a line keeps them; 4 are masked.
	for _, tc := range []struct{ in, want string }{
		{"ine", "ine"},
		{"line", Mask},
		{"fir", "fir"},
		{"firs", Mask},
		{"x sec", "x sec"},
		{"x seco", "x ***"},
		{"ine\nsecond-line", "ine\n***"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// TestEdgesOnlyForLines: a single-line secret is not masked in part at a
// text's edges (its start is not a secret's fragment: a slice name is the
// tail of the address that holds it).
func TestEdgesOnlyForLines(t *testing.T) {
	t.Parallel()
	r := New("postgres://acme_w0:derived0Pw0rd@127.0.0.1:5432/acme_w0", "hunter22-and-more")
	for _, in := range []string{"acme_w0 is up", "5432/acme_w0", "adapter postgres", "hunter22"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q; want it unchanged", in, got)
		}
	}
}

func ExampleRedactor_String_window() {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----"
	r := New(key)
	// The last three lines of a log that printed the key.
	fmt.Println(r.String("gkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\nexit 1"))
	// Output:
	// ***
	// ***
	// -----END PRIVATE KEY-----
	// exit 1
}

// TestWriterFlushStartsAWindow: a stream that went quiet inside a line of
// a key, was flushed, and then goes on has both parts of the line masked.
func TestWriterFlushStartsAWindow(t *testing.T) {
	t.Parallel()
	key := testPEM(5, 300)
	r := New(key)
	line := bodyLines(key)[1]
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte("x " + line[:20]))
	w.Flush()
	w.Write([]byte(line[20:] + "\nok\n"))
	w.Close()
	if got, want := out.String(), "x ***\nok\n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	// A single-line secret's rest after a Flush is not recognised, and
	// plain text after a Flush passes as before.
	r = New("hunter22-and-more")
	out.Reset()
	w = r.Writer(&out)
	w.Write([]byte("pw hunter22"))
	w.Flush()
	w.Write([]byte("-and-more\nplain\n"))
	w.Close()
	if got, want := out.String(), "pw ***-and-more\nplain\n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}
