package redact

import (
	"bytes"
	"encoding/base64"
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

// benchPEMRedactor is benchRedactor that also knows two PEM-shaped keys
// (a 2048- and a 4096-bit RSA key's size): 80 lines registered on their
// own.
func benchPEMRedactor() *Redactor {
	r := benchRedactor()
	for i, size := range []int{1191, 2349} {
		r.Add(benchPEM(byte(i), size))
	}
	return r
}

// benchPEM is a PEM-shaped key over size deterministic bytes.
func benchPEM(seed byte, size int) string {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*131 + int(seed)*17 + i*i%251)
	}
	enc := base64.StdEncoding.EncodeToString(b)
	var s strings.Builder
	s.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for i := 0; i < len(enc); i += 64 {
		s.WriteString(enc[i:min(i+64, len(enc))] + "\n")
	}
	s.WriteString("-----END RSA PRIVATE KEY-----")
	return s.String()
}

// BenchmarkStringPEM: BenchmarkString with two PEM keys registered.
func BenchmarkStringPEM(b *testing.B) {
	r, in := benchPEMRedactor(), benchLog()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = r.String(in)
	}
}

// BenchmarkLinePEM: BenchmarkLine with two PEM keys registered (every
// String call is a window whose edges are checked).
func BenchmarkLinePEM(b *testing.B) {
	r := benchPEMRedactor()
	in := "2026-01-02T15:04:05Z INFO request id=1 path=/api/v1/items/7 status=200 took=3ms"
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = r.String(in)
	}
}

// BenchmarkWriterPEM: BenchmarkWriter with two PEM keys registered.
func BenchmarkWriterPEM(b *testing.B) {
	r, in := benchPEMRedactor(), benchLog()
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

// BenchmarkEscapedLog: 64 KiB of JSON log lines full of escapes (\" and
// \u003c, %XX in URLs), where every escape is decoded to look for a form.
func BenchmarkEscapedLog(b *testing.B) {
	r := benchPEMRedactor()
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		fmt.Fprintf(&sb, `{"t":"2026-01-02T15:04:05Z","msg":"GET /search?q=a%%20b%%2Fc%%3D%d&x=%%E2%%82%%AC \"ok\" \u003cdiv\u003e","n":%d}`+"\n", i, i)
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = r.String(in)
	}
}

// BenchmarkRepeatedByteLines is BenchmarkRepeatedByteSecret for a
// multi-line secret, whose lines are also matched in part at a window's
// edges: a text that repeats the lines' byte but ends differently makes
// every suffix a candidate at its start. Its cost grows with text × line
// length, as BenchmarkRepeatedByteSecret's does.
func BenchmarkRepeatedByteLines(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		line := strings.Repeat("\xcf", n)
		r := New(line + "\n" + line)
		text := strings.Repeat("\xcf", n/2) + "x"
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.String(text)
			}
		})
	}
}

// BenchmarkRepeatedEscapedSecret is BenchmarkRepeatedByteSecret where the
// text spells the repeated byte as an escape sequence (\" in a JSON string,
// %21 in a URL): every step of every comparison decodes one.
func BenchmarkRepeatedEscapedSecret(b *testing.B) {
	for _, tc := range []struct{ name, secret, unit string }{
		{"json", `"`, `\"`},
		{"percent", "!", "%21"},
	} {
		for _, n := range []int{256, 1024} {
			r := New(strings.Repeat(tc.secret, n))
			text := strings.Repeat(tc.unit, 2*n)
			b.Run(fmt.Sprintf("%s/%d", tc.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					r.String(text)
				}
			})
		}
	}
}
