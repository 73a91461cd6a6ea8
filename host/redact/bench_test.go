package redact

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// benchRedactor knows what a daemon with a few worlds knows: ten env
// values and five slice passwords.
func benchRedactor() *Redactor {
	r := New()
	for i := range 10 {
		r.Add(fmt.Sprintf("env-secret-value-%02d-Zq8", i))
	}
	for i := range 5 {
		r.Add(fmt.Sprintf("postgres://acme_w%d:derived%dPw0rd@127.0.0.1:5432/acme_w%d", i, i, i))
	}
	return r
}

// benchLog is 64 KiB of ordinary service output holding one secret.
func benchLog() string {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "2026-01-02T15:04:05Z INFO request id=%d path=/api/v1/items/%d status=200 took=%dms\n", i, i*7, i%50)
		if i == 300 {
			b.WriteString("connecting with env-secret-value-03-Zq8\n")
		}
	}
	return b.String()
}

// BenchmarkString: one 64 KiB chunk through String.
func BenchmarkString(b *testing.B) {
	r, in := benchRedactor(), benchLog()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = r.String(in)
	}
}

// BenchmarkLine: one short log line, the daemon's common case.
func BenchmarkLine(b *testing.B) {
	r := benchRedactor()
	in := "2026-01-02T15:04:05Z INFO request id=1 path=/api/v1/items/7 status=200 took=3ms"
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = r.String(in)
	}
}

// BenchmarkWriter: the same 64 KiB written line by line through a Writer.
func BenchmarkWriter(b *testing.B) {
	r, in := benchRedactor(), benchLog()
	lines := strings.SplitAfter(in, "\n")
	b.SetBytes(int64(len(in)))
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		w := r.Writer(&out)
		for _, l := range lines {
			w.Write([]byte(l))
		}
		w.Close()
	}
}

// BenchmarkRepeatedByteSecret is the worst case FuzzForms found: a secret
// that repeats one byte, in a text that repeats it too, so that every
// position begins an occurrence. Its cost grows with text × secret length.
func BenchmarkRepeatedByteSecret(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		secret := strings.Repeat("\xcf", n)
		r := New(secret)
		text := strings.Repeat("\xcf", 2*n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.String(text)
			}
		})
	}
}
