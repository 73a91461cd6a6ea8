package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretEnv(t *testing.T) {
	cfg, ds, err := Parse("binky.toml", []byte(`
[project]
name = "acme"
secrets = ["SESSION_SEED"]

[services.db]
adapter = "postgres"
admin_url = "${env.PG_ADMIN}"

[services.web]
cmd = "run ${env.PORT} ${env.SESSION_SEED} ${env.DB_ADAPTER} ${env.PGPASS} ${env.KEY_PREFIX} ${env.REMOTE}"
env = { DATABASE_PASSWORD = "${env.PGPASS}" }
`))
	if err != nil || ds.HasErrors() {
		t.Fatalf("parse: %v %v", err, ds)
	}
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"PORT", "3000", false},
		{"DB_ADAPTER", "sqlite", false},
		{"KEY_PREFIX", "acme:", false},
		{"AUTH_MODE", "basic", false},
		{"DB_PASSWORD", "hunter2", true},
		{"STRIPE_API_KEY", "sk_live_x", true},
		{"SECRET_KEY_BASE", "abcdef", true},
		{"SENTRY_DSN", "https://k@sentry.io/1", true},
		{"GITHUB_TOKEN", "ghp_x", true},
		{"BASIC_AUTH", "u:p", true},
		{"P2_CRED", "guest:guest", true},
		{"PRIVATE_KEY", "-----BEGIN", true},
		{"REMOTE", "postgres://app:s3cret@db/app", true},
		{"REMOTE", "postgres://app@db/app", false},
		{"PG_ADMIN", "postgres://postgres@127.0.0.1/", true},
		{"PGPASS", "pw-in-env", true},
		{"SESSION_SEED", "xyz-seed", true},
	} {
		if got := SecretEnv(cfg, tc.name, tc.value); got != tc.want {
			t.Errorf("SecretEnv(%s=%q) = %v; want %v", tc.name, tc.value, got, tc.want)
		}
	}
	got := SecretValues(cfg, map[string]string{"PORT": "3000", "SESSION_SEED": "seed-value", "DB_ADAPTER": "sqlite"})
	if !slices.Equal(got, []string{"seed-value"}) {
		t.Errorf("SecretValues = %q; want [seed-value]", got)
	}
}

func TestProjectSecretsValidated(t *testing.T) {
	_, ds, err := Parse("binky.toml", []byte(`
[project]
name = "acme"
secrets = ["1BAD", "UNUSED"]

[services.web]
cmd = "run ${env.USED}"
`))
	if err != nil {
		t.Fatal(err)
	}
	out := report(ds, nil)
	for _, want := range []string{`error: project.secrets: "1BAD" is not a variable name`, "warning: project.secrets names UNUSED, which no ${env.UNUSED} token reads"} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, out)
		}
	}
}

// TestCheckWarningRuleUnchanged: widening the redaction rule does not
// widen check's literal-secret warning (host/compose mirrors that one).
func TestCheckWarningRuleUnchanged(t *testing.T) {
	for name, want := range map[string]bool{"SESSION_KEY": false, "SENTRY_DSN": false, "AWS_ACCESS_KEY_ID": true, "DB_PASSWORD": true} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%s) = %v; want %v", name, got, want)
		}
	}
	for _, name := range []string{"SESSION_KEY", "SENTRY_DSN", "AWS_ACCESS_KEY_ID", "DB_PASS", "BASIC_AUTH"} {
		if !secretEnvName(name) {
			t.Errorf("secretEnvName(%s) = false; want true", name)
		}
	}
}
