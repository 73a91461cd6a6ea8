package sdk

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// leak returns a MinScrub-byte piece of pw that a part of msg left
// unmasked by Scrub still holds, or "". Every longer piece holds one of
// MinScrub bytes, so checking those is checking them all.
func leak(msg string, covered []bool, pw string) string {
	for i := 0; i < len(msg); {
		j := i
		for j < len(msg) && (covered == nil || !covered[j]) {
			j++
		}
		for k := 0; k+MinScrub <= len(pw); k++ {
			if strings.Contains(msg[i:j], pw[k:k+MinScrub]) {
				return pw[k : k+MinScrub]
			}
		}
		for j < len(msg) && covered[j] {
			j++
		}
		i = j
	}
	return ""
}

// FuzzScrub: for any password of MinScrub bytes or more, a message that
// quotes it in any of its forms, in pieces, or as net/url's parse error of
// a URL holding it keeps no piece of it of MinScrub bytes, and keeps no
// whole form of it of any length.
func FuzzScrub(f *testing.F) {
	f.Add("connect to ", "S3cr3t-PgPw/x", " failed", "db.local:5432")
	f.Add("", "p@ss w/rd", "", "h")
	f.Add("auth ", "pässwörd\n\"q\"", ": no", "[::1]")
	f.Add("xx", "xxxxyy", "xx", "h")
	f.Fuzz(func(t *testing.T, pre, pw, post, host string) {
		if len(pw) < MinScrub {
			return
		}
		msgs := []string{pre + post}
		for _, form := range passwordForms(pw) {
			msgs = append(msgs, pre+form+post, form+pre+form)
		}
		msgs = append(msgs, pre+pw[:len(pw)/2]+post+pw[len(pw)/2:])
		raw := "postgres://admin:" + pw + "@" + host + "/db"
		if _, err := url.Parse(raw); err != nil {
			msgs = append(msgs, err.Error(), fmt.Sprintf("%s: %v", pre, err))
		}
		if u, err := url.Parse("redis://" + host); err == nil {
			u.User = url.UserPassword("u", pw)
			msgs = append(msgs, u.String(), u.Redacted()+pre)
		}
		for _, msg := range msgs {
			forms := passwordForms(pw)
			covered := scrubCover(msg, forms)
			if l := leak(msg, covered, pw); l != "" {
				t.Fatalf("Scrub(%q, %q) = %q keeps %q", msg, pw, Scrub(msg, pw), l)
			}
			for _, form := range forms {
				if l := leak(msg, covered, form); l != "" {
					t.Fatalf("Scrub(%q, %q) = %q keeps %q of the form %q", msg, pw, Scrub(msg, pw), l, form)
				}
			}
			got := Scrub(msg, pw)
			if covered == nil && got != msg {
				t.Fatalf("Scrub(%q, %q) = %q; nothing to mask, want it unchanged", msg, pw, got)
			}
			// AdminPasswords finds the password in the URL as written,
			// parsed or not.
			if l := leak(msg, scrubCover(msg, adminForms(raw)), pw); l != "" {
				t.Fatalf("ScrubAdmin(%q, %q) = %q keeps %q", msg, raw, ScrubAdmin(msg, raw), l)
			}
		}
	})
}

func adminForms(raw string) []string {
	var forms []string
	for _, pw := range AdminPasswords(raw) {
		if pw != "" {
			forms = append(forms, passwordForms(pw)...)
		}
	}
	return forms
}
