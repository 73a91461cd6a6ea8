package dashboard_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/dashboard"
	"github.com/binkyhq/binky/host/redact"
)

// TestDashboardRedacts: a known secret in a service detail, a log line, a verify
// summary or an event error, raw or base64, never reaches the page.
func TestDashboardRedacts(t *testing.T) {
	t.Parallel()
	const secret = "Dash-S3cret-Value"
	src := sample(7355)
	src.worlds[1].Services[0].Detail = "exit 1: auth " + secret + " refused"
	src.worlds[1].Verify.Summary = "curl -u u:" + secret
	src.worlds[1].Services[0].LogTail = []string{"starting", "token=" + secret}
	src.events[2].Error = "pg_dump: token " + base64.StdEncoding.EncodeToString([]byte(secret))
	h := dashboard.New(src, dashboard.Options{Now: func() time.Time { return now }, Redactor: redact.New(secret)})
	_, body := fetch(t, h, "/")
	for _, f := range redact.Forms(secret) {
		if strings.Contains(body, f) {
			t.Errorf("dashboard shows %q, a form of the secret", f)
		}
	}
	if !strings.Contains(body, "exit 1: auth *** refused") {
		t.Errorf("dashboard lacks the redacted detail")
	}
	if !strings.Contains(body, "token=***") {
		t.Errorf("dashboard lacks the redacted log line")
	}
}
