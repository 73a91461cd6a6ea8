package s3adapter

import (
	"context"
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// leakedPiece returns a piece of pw of sdk.MinScrub bytes that msg still
// holds outside its masks, or "". A piece holding 'x' is not looked for:
// next to a mask (xxxxx) it may be the mask's own letters.
func leakedPiece(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			p := pw[i : i+sdk.MinScrub]
			if !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want endpoint // zero host: an error
	}{
		{"http://ak:sk@127.0.0.1:9000", endpoint{host: "127.0.0.1:9000", access: "ak", secret: "sk"}},
		{"https://ak:s%2Fk@s3.example.com?region=eu-west-1", endpoint{secure: true, host: "s3.example.com", access: "ak", secret: "s/k", region: "eu-west-1"}},
		{"http://ak:sk@h:9000/bucket-1", endpoint{host: "h:9000", access: "ak", secret: "sk", bucket: "bucket-1"}},
		{"http://ak@h:9000", endpoint{}},
		{"http://h:9000", endpoint{}},
		{"s3://ak:sk@h", endpoint{}},
		{"http://ak:sk@h?bucket=x", endpoint{}},
		{"http://ak:sk@h/a/b", endpoint{}},
		{"http://ak:sk@h:", endpoint{}},
		{"", endpoint{}},
	} {
		got, err := parseURL(tc.raw)
		if tc.want.host == "" {
			if err == nil || sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Errorf("parseURL(%q) = %+v, %v; want an invalid error", tc.raw, got, err)
			}
			continue
		}
		if err != nil || *got != tc.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want string // region; "!" for an error
	}{
		{nil, ""},
		{map[string]any{KeyRegion: "eu-west-1"}, "eu-west-1"},
		{map[string]any{KeyCredentials: "admin"}, ""},
		{map[string]any{KeyCredentials: "per-slice"}, "!"},
		{map[string]any{KeyCredentials: true}, "!"},
		{map[string]any{KeyRegion: 3}, "!"},
		{map[string]any{"bucket": "x"}, "!"},
	} {
		got, err := parseConfig(tc.cfg)
		if tc.want == "!" {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Errorf("parseConfig(%v) = %+v, %v; want an invalid error", tc.cfg, got, err)
			}
			continue
		}
		if err != nil || got.region != tc.want {
			t.Errorf("parseConfig(%v) = %+v, %v; want region %q", tc.cfg, got, err, tc.want)
		}
	}
}

// TestBucketNames: every slice, odd branches and cut names included, maps
// to a bucket name S3 accepts, and resolve names it.
func TestBucketNames(t *testing.T) {
	long := names.Slice("acme", names.Worktree(strings.Repeat("feature/very-long-branch-", 8)))
	for _, s := range []string{"acme_main", long, names.Slice("acme", names.Worktree("Feat/ÄÖ..//x")), "xn_acme_main", "acme_x_s3alias"} {
		b := names.Bucket(s)
		if !validBucket(b) {
			t.Errorf("slice %q maps to bucket %q, which S3 refuses", s, b)
		}
		r, err := New().Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target("http://ak:sk@h:9000", s, nil)})
		if err != nil {
			t.Fatalf("resolve %q: %v", s, err)
		}
		if back, perr := parseURL(r.Address); perr != nil || r.Values["bucket"] != b || back.bucket != b {
			t.Errorf("resolve %q = %+v, %v; want bucket %q", s, r, err, b)
		}
	}
	if a, b := names.Bucket("acme_feat_a"), names.Bucket("acme_feat_a_"); a == b {
		t.Errorf("two slices share bucket %q", a)
	}
}

// validBucket follows S3's general purpose bucket naming rules.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 || strings.Contains(b, "..") {
		return false
	}
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '-' || c == '.') && i > 0 && i < len(b)-1
		if !ok {
			return false
		}
	}
	return true
}

// FuzzAdminSecrets: whatever surrounds a secret key in an admin_url, and
// however it fails to parse, no error of the parse path (parseURL, and
// Resolve, which connects to nothing) shows a piece of it of sdk.MinScrub
// bytes; and whatever resolve answers parses back through parseURL to the
// same server, keys and region, naming the slice's bucket.
func FuzzAdminSecrets(f *testing.F) {
	f.Add("http://", "binky", "S3cr3t-Key/9", "127.0.0.1:9000", "")
	f.Add("https://", "ak", "p@ss#word", "h", "?region=eu-west-1")
	f.Add("http://", "ak", "pw pw pw", "[::1", "")
	f.Add("http://", "ak", "p%zzword", "h:9000", "/bucket")
	f.Add("s3://", "ak", "secret", "h", "?region=x&password=secret2")
	f.Fuzz(func(t *testing.T, scheme, user, pw, host, rest string) {
		if len(pw) < sdk.MinScrub {
			return
		}
		raw := scheme + user + ":" + pw + "@" + host + rest
		in, err := parseURL(raw)
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("parseURL(%q): error %q shows %q", raw, err, p)
			}
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("parseURL(%q): code %q; want invalid", raw, sdk.CodeOf(err))
			}
		}
		r, err := New().Resolve(context.Background(), &sdk.ResolveRequest{Header: hdr(), Target: target(raw, "acme_main", nil)})
		if err != nil {
			if p := leakedPiece(err.Error(), pw); p != "" {
				t.Fatalf("resolve with %q: error %q shows %q", raw, err, p)
			}
			return
		}
		back, err := parseURL(r.Address)
		if err != nil {
			t.Fatalf("admin %q: address %q does not parse back: %v", raw, r.Address, err)
		}
		region := in.region
		if region == "" {
			region = DefaultRegion
		}
		if back.host != in.host || back.access != in.access || back.secret != in.secret || back.secure != in.secure || back.region != region || back.bucket != "acme-main" {
			t.Fatalf("admin %q: address %q reads as %+v", raw, r.Address, back)
		}
	})
}
