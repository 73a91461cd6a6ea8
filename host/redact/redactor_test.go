package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none registered", nil, "password hunter22", "password hunter22"},
		{"plain", []string{"hunter22"}, "pw=hunter22 ok", "pw=*** ok"},
		{"every occurrence", []string{"hunter22"}, "hunter22/hunter22", "***/***"},
		{"adjacent occurrences merge", []string{"hunter22"}, "hunter22hunter22!", "***!"},
		{"overlapping secrets merge", []string{"abcdef", "defghi"}, "xabcdefghiy", "x***y"},
		{"longer secret wins over its prefix", []string{"abcd", "abcdefgh"}, "abcdefgh-abcd", "***-***"},
		{"short values ignored", []string{"abc", "", "x"}, "abc x", "abc x"},
		{"exactly four bytes", []string{"abcd"}, "abcd", "***"},
		{"query escaped", []string{"p@ss w/rd&"}, "u=p%40ss+w%2Frd%26", "u=***"},
		{"path escaped", []string{"p@ss w/rd&"}, "/p@ss%20w%2Frd&/", "/***/"},
		{"url password", []string{"postgres://bob:s3cr%2Ft@db:5432/app"}, "auth s3cr/t failed; raw s3cr%2Ft", "auth *** failed; raw ***"},
		{"url whole", []string{"postgres://bob:s3cret@db:5432/app"}, "dial postgres://bob:s3cret@db:5432/app: refused", "dial ***: refused"},
		{"across lines", []string{"line1\nline2"}, "a line1\nline2 b", "a *** b"},
		{"multibyte", []string{"pässwörd"}, "[pässwörd]", "[***]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := New(tc.secrets...)
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q; want %q", tc.in, got, tc.want)
			}
			if got := string(r.Bytes([]byte(tc.in))); got != tc.want {
				t.Errorf("Bytes(%q) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNilRedactor(t *testing.T) {
	t.Parallel()
	var r *Redactor
	r.Add("hunter22")
	if got := r.String("hunter22"); got != "hunter22" {
		t.Errorf("nil String = %q; want input unchanged", got)
	}
	var out bytes.Buffer
	w := r.Writer(&out)
	fmt.Fprint(w, "hello hunter22")
	w.Close()
	if got := out.String(); got != "hello hunter22" {
		t.Errorf("nil Writer wrote %q; want input unchanged", got)
	}
}

func TestAddRegistersEncodedForms(t *testing.T) {
	t.Parallel()
	secret := "a b/c?d"
	r := New(secret)
	enc := []byte(secret)
	for _, form := range []string{
		secret, url.QueryEscape(secret), url.PathEscape(secret),
		hex.EncodeToString(enc), strings.ToUpper(hex.EncodeToString(enc)),
		base64.StdEncoding.EncodeToString(enc), base64.RawStdEncoding.EncodeToString(enc),
		base64.URLEncoding.EncodeToString(enc), base64.RawURLEncoding.EncodeToString(enc),
	} {
		if got := r.String("<" + form + ">"); got != "<***>" {
			t.Errorf("String(<%s>) = %q; want %q", form, got, "<***>")
		}
	}
	n := len(Forms(secret))
	if got := r.Len(); got != n {
		t.Errorf("Len() = %d; want %d (every form of %q)", got, n, secret)
	}
	r.Add(secret)
	if got := r.Len(); got != n {
		t.Errorf("Len() after re-adding = %d; want %d", got, n)
	}
}

// TestWriterSplitEverywhere writes an input in two parts split at every
// possible position, and in one-byte writes, and expects exactly what String
// gives for the whole.
func TestWriterSplitEverywhere(t *testing.T) {
	t.Parallel()
	r := New("hunter22", "correct horse\nbattery", "abcdef", "defghi")
	in := "x hunter22 y correct horse\nbattery z abcdefghi hunter2 hunter22hunter22 end"
	want := r.String(in)
	if strings.Contains(want, "hunter22") {
		t.Fatalf("String left a secret: %q", want)
	}
	for i := 0; i <= len(in); i++ {
		var out bytes.Buffer
		w := r.Writer(&out)
		if _, err := w.Write([]byte(in[:i])); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(in[i:])); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Errorf("split at %d: got %q; want %q", i, got, want)
		}
	}
	var out bytes.Buffer
	w := r.Writer(&out)
	for i := range len(in) {
		w.Write([]byte{in[i]})
	}
	w.Close()
	if got := out.String(); got != want {
		t.Errorf("byte at a time: got %q; want %q", got, want)
	}
}

func TestWriterHoldsBackOnlyATail(t *testing.T) {
	t.Parallel()
	r := New("0123456789")
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte("hello world, this is plain text 01234"))
	// Everything before the first byte that could begin a secret is
	// settled; "01234" could be the start of "0123456789".
	if got, want := out.String(), "hello world, this is plain text "; got != want {
		t.Errorf("written before Close = %q; want %q", got, want)
	}
	w.Write([]byte("56789 done"))
	w.Close()
	if got, want := out.String(), "hello world, this is plain text *** done"; got != want {
		t.Errorf("written after Close = %q; want %q", got, want)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Errorf("Write after Close: got nil error; want an error")
	}
}

// TestWriterLongRun feeds a run of back-to-back secrets longer than what the
// writer holds back, so it must flush inside the run; no fragment of the
// secret may escape.
func TestWriterLongRun(t *testing.T) {
	t.Parallel()
	secret := "s3cr3t-t0k3n-v4lue"
	r := New(secret)
	in := "start " + strings.Repeat(secret, (3*maxHold)/len(secret)) + " end"
	var out bytes.Buffer
	w := r.Writer(&out)
	for off := 0; off < len(in); off += 1000 {
		w.Write([]byte(in[off:min(off+1000, len(in))]))
	}
	w.Close()
	got := out.String()
	if !strings.HasPrefix(got, "start ***") || !strings.HasSuffix(got, "*** end") {
		t.Fatalf("got %.40q…%q; want start ***…*** end", got, got[max(0, len(got)-20):])
	}
	if rest := strings.Trim(got[len("start "):len(got)-len(" end")], "*"); rest != "" {
		t.Errorf("between the masks got %q; want only masks", rest)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := New()
	var out bytes.Buffer
	var mu sync.Mutex
	w := r.Writer(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := fmt.Sprintf("secret-%d-value", i)
			r.Add(s)
			for range 100 {
				if got := r.String("<" + s + ">"); got != "<***>" {
					t.Errorf("String = %q; want <***>", got)
					return
				}
				fmt.Fprintf(w, "%s\n", s)
			}
		})
	}
	wg.Wait()
	w.Close()
	if strings.Contains(out.String(), "secret-") {
		t.Errorf("writer output contains a secret added before it was written")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestPlainServerAddressIsNotSecret: a password-less admin URL is an
// address; registering it masked every slice address built on it
// (status showed ***name). URLs that can carry a secret still count.
func TestPlainServerAddressIsNotSecret(t *testing.T) {
	for _, tc := range []struct {
		secret, text, want string
	}{
		{"postgres://postgres@127.0.0.1:5432/postgres", "postgres://postgres@127.0.0.1:5432/postgres_demo", "postgres://postgres@127.0.0.1:5432/postgres_demo"},
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"mysql://root@127.0.0.1:3306/", "mysql://root@127.0.0.1:3306/app", "mysql://root@127.0.0.1:3306/app"},
		{"postgres://admin:hunter22@db:5432/x", "pw hunter22", "pw ***"},
		{"postgres://u@db:5432/x?password=hunter22", "postgres://u@db:5432/x?password=hunter22", "***"},
		{"https://hooks.example.com/T0/B0/abcdef", "post to https://hooks.example.com/T0/B0/abcdef", "post to ***"},
		{"not a url at all", "x not a url at all", "x ***"},
	} {
		if got := New(tc.secret).String(tc.text); got != tc.want {
			t.Errorf("New(%q).String(%q) = %q; want %q", tc.secret, tc.text, got, tc.want)
		}
	}
}

// TestShortValuesNeverMasked: a value under MinLen bytes is never masked,
// whether added as a secret or as a password in an address: "300" or "pw"
// would mask ordinary text ("listening on :***0").
func TestShortValuesNeverMasked(t *testing.T) {
	r := New()
	r.Add("300")
	r.AddAddress("postgres://app:pw@127.0.0.1:5432/app")
	const line = "listening on :3000 as app:pw"
	if got := r.String(line); got != line {
		t.Errorf("String(%q) = %q; want it unchanged", line, got)
	}
	r.Add("3000x")
	if got := r.String("port 3000x"); got == "port 3000x" {
		t.Errorf("a 5-byte secret was not masked: %q", got)
	}
}
