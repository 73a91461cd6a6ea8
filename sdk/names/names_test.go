package names_test

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/names"
)

func TestWorktree(t *testing.T) {
	long := strings.Repeat("a", 300)
	tests := []struct {
		branch, want string
	}{
		{"main", "main"},
		{"feat-a", "feat-a"},
		{"release-2024-10", "release-2024-10"},
		{"abc123", "abc123"},
		{"feat/a", "feat-a-d54ad7"},
		{"Feat/A", "feat-a-4c0c8f"},
		{"FEAT-A", "feat-a-5a6ef0"},
		{"", "wt-e3b0c4"},
		{"../../etc", "etc-74ccf3"},
		{"a;rm -rf /", "a-rm-rf-e7d7ee"},
		{"fаke", "f-ke-089850"}, // Cyrillic а
		{"con", "con-1143da"},
		{"feat-a-1b2c3d", "feat-a-1b2c3d-d3fbf9"},
		{long, strings.Repeat("a", 56) + "-" + sha6(long)},
		{strings.Repeat("b", 63), strings.Repeat("b", 63)},
		{strings.Repeat("b", 64), strings.Repeat("b", 56) + "-" + sha6(strings.Repeat("b", 64))},
		{strings.Repeat("ab-", 30), "ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-" + sha6(strings.Repeat("ab-", 30))},
		{"\x00", "wt-" + sha6("\x00")},
		{"ＦＵＬＬ", "wt-" + sha6("ＦＵＬＬ")},
	}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			got := names.Worktree(tt.branch)
			if got != tt.want {
				t.Errorf("Worktree(%q) = %q; want %q", tt.branch, got, tt.want)
			}
			if r := checkWorktree(got); r != "" {
				t.Errorf("Worktree(%q) = %q: %s", tt.branch, got, r)
			}
		})
	}
}

func TestLabelAndHost(t *testing.T) {
	tests := []struct {
		in, label string
	}{
		{"main", "main"},
		{"feat-a-d54ad7", "feat-a-d54ad7"},
		{"feat/a", "feat-a-d54ad7"},
		{"my--app", "my-app-" + sha6("my--app")},
		{"-x-", "x-" + sha6("-x-")},
		{"xn--80ak6aa92e", "xn-80ak6aa92e-" + sha6("xn--80ak6aa92e")},
	}
	for _, tt := range tests {
		if got := names.Label(tt.in); got != tt.label {
			t.Errorf("Label(%q) = %q; want %q", tt.in, got, tt.label)
		}
	}
	if got, want := names.Host("web", "feat-a-d54ad7", "acme"), "web.feat-a-d54ad7.acme.localhost"; got != want {
		t.Errorf("Host = %q; want %q", got, want)
	}
	if got, want := names.Host("Web", "feat/a", "acme"), "web-"+sha6("Web")+".feat-a-d54ad7.acme.localhost"; got != want {
		t.Errorf("Host = %q; want %q", got, want)
	}
}

func TestIsLabel(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"web", true},
		{"a-b", true},
		{"a--b", true},
		{"xn--abc", false},
		{"ab--c", false},
		{"-a", false},
		{"a-", false},
		{"", false},
		{"A", false},
		{"a_b", false},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
	}
	for _, tt := range tests {
		if got := names.IsLabel(tt.in); got != tt.want {
			t.Errorf("IsLabel(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestSlice(t *testing.T) {
	tests := []struct {
		project, worktree, want string
	}{
		{"acme", "main", "acme_main"},
		{"acme", "feat-login-3f2a9c", "acme_feat_login_3f2a9c"},
		{"acme", "golden", "acme_golden"},
		{"acme", "golden-main", "acme_golden_main__"},
		{"my-app", "main", "my_app_main__"},
		{"my", "app-main", "my_app_main"},
		{"acme", "feat/a", "acme_feat_a__"},
		{"acme", "", "acme__"},
		{"", "main", "main__"},
		{"", "", "s__"},
		{"acme", strings.Repeat("x", 58), "acme_" + strings.Repeat("x", 58)},
		{"acme", strings.Repeat("x", 59), "acme_" + strings.Repeat("x", 50) + "__"},
	}
	for _, tt := range tests {
		got := names.Slice(tt.project, tt.worktree)
		if strings.HasSuffix(tt.want, "__") {
			// hashed: the text, then "__" and six hex digits
			if !strings.HasPrefix(got, tt.want) || len(got) != len(tt.want)+6 {
				t.Errorf("Slice(%q, %q) = %q; want %q and six hex digits", tt.project, tt.worktree, got, tt.want)
			}
		} else if got != tt.want {
			t.Errorf("Slice(%q, %q) = %q; want %q", tt.project, tt.worktree, got, tt.want)
		}
		if r := checkSlice(got); r != "" {
			t.Errorf("Slice(%q, %q) = %q: %s", tt.project, tt.worktree, got, r)
		}
	}
	if a, b := names.Slice("acme", "golden-main"), names.Golden("acme", "main"); a == b {
		t.Errorf("Slice(acme, golden-main) = Golden(acme, main) = %q; want different", a)
	}
	if a, b := names.Slice("my-app", "main"), names.Slice("my", "app-main"); a == b {
		t.Errorf("Slice(my-app, main) = Slice(my, app-main) = %q; want different", a)
	}
}

func TestGolden(t *testing.T) {
	if got, want := names.Golden("acme", "main"), "acme_golden_main"; got != want {
		t.Errorf("Golden(acme, main) = %q; want %q", got, want)
	}
	if got, want := names.Golden("acme", "golden"), "acme_golden_golden"; got != want {
		t.Errorf("Golden(acme, golden) = %q; want %q", got, want)
	}
	for _, in := range [][2]string{{"my-app", "main"}, {"acme", "Main"}, {"acme", strings.Repeat("m", 60)}} {
		got := names.Golden(in[0], in[1])
		if !strings.Contains(got, "__") {
			t.Errorf("Golden(%q, %q) = %q; want a hashed name", in[0], in[1], got)
		}
		if r := checkSlice(got); r != "" {
			t.Errorf("Golden(%q, %q) = %q: %s", in[0], in[1], got, r)
		}
	}
}

func TestBackends(t *testing.T) {
	tests := []struct {
		slice, pg, my, bucket, kafka, vhost, redis, index string
	}{
		{"acme_main", "acme_main", "acme_main", "acme-main", "acme-main.", "acme_main", "acme_main:", "acme_main-"},
		{"acme_feat_a__d54ad7", "acme_feat_a__d54ad7", "acme_feat_a__d54ad7", "acme-feat-a--d54ad7", "acme-feat-a--d54ad7.", "acme_feat_a__d54ad7", "acme_feat_a__d54ad7:", "acme_feat_a__d54ad7-"},
		{"information_schema", "information_schema", "information_schema_", "information-schema", "information-schema.", "information_schema", "information_schema:", "information_schema-"},
		{"xn__abc", "xn__abc", "xn__abc", "x.xn--abc.x", "xn--abc.", "xn__abc", "xn__abc:", "xn__abc-"},
		{"sthree_x", "sthree_x", "sthree_x", "x.sthree-x.x", "sthree-x.", "sthree_x", "sthree_x:", "sthree_x-"},
		{"a_s3alias", "a_s3alias", "a_s3alias", "x.a-s3alias.x", "a-s3alias.", "a_s3alias", "a_s3alias:", "a_s3alias-"},
		{"a__ol_s3", "a__ol_s3", "a__ol_s3", "x.a--ol-s3.x", "a--ol-s3.", "a__ol_s3", "a__ol_s3:", "a__ol_s3-"},
		{"1_2", "1_2", "1_2", "1-2", "1-2.", "1_2", "1_2:", "1_2-"},
	}
	for _, tt := range tests {
		t.Run(tt.slice, func(t *testing.T) {
			for _, c := range []struct{ name, got, want string }{
				{"Postgres", names.Postgres(tt.slice), tt.pg},
				{"MySQL", names.MySQL(tt.slice), tt.my},
				{"Bucket", names.Bucket(tt.slice), tt.bucket},
				{"KafkaPrefix", names.KafkaPrefix(tt.slice), tt.kafka},
				{"Vhost", names.Vhost(tt.slice), tt.vhost},
				{"RedisPrefix", names.RedisPrefix(tt.slice), tt.redis},
				{"IndexPrefix", names.IndexPrefix(tt.slice), tt.index},
			} {
				if c.got != c.want {
					t.Errorf("%s(%q) = %q; want %q", c.name, tt.slice, c.got, c.want)
				}
			}
			checkBackends(t, tt.slice)
		})
	}
	// A long slice that hits a reserved bucket name is cut and hashed.
	long := "xn__" + strings.Repeat("a", 59)
	if got := names.Bucket(long); len(got) > 63 || !strings.HasPrefix(got, "x.xn--aaa") || !strings.HasSuffix(got, ".x") {
		t.Errorf("Bucket(%q) = %q; want x.xn--aaa…-<hash>.x within 63 bytes", long, got)
	}
	checkBackends(t, long)
}

func TestBackendsOfNonSlice(t *testing.T) {
	for _, in := range []string{"", "a", "postgres", "template1", "mysql", "sys", "Acme_Main", "../../etc", "a\x00b", "_a_", "192.168.0.1", strings.Repeat("z", 300)} {
		t.Run(in, func(t *testing.T) {
			got := names.Postgres(in)
			if got == in {
				t.Errorf("Postgres(%q) = %q; want a hashed name for a non-slice", in, got)
			}
			checkBackends(t, in)
		})
	}
}

// checkBackends checks every backend name of s against its rules.
func checkBackends(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		name, got string
		check     func(string) string
	}{
		{"Postgres", names.Postgres(s), checkPostgres},
		{"MySQL", names.MySQL(s), checkMySQL},
		{"Bucket", names.Bucket(s), checkBucket},
		{"KafkaPrefix", names.KafkaPrefix(s), checkKafkaPrefix},
		{"Vhost", names.Vhost(s), checkVhost},
		{"RedisPrefix", names.RedisPrefix(s), checkRedisPrefix},
		{"IndexPrefix", names.IndexPrefix(s), checkIndexPrefix},
	} {
		if r := c.check(c.got); r != "" {
			t.Errorf("%s(%q) = %q: %s", c.name, s, c.got, r)
		}
	}
}
