package rabbitmq

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/binkyhq/binky/plugins/http-adapters/internal/httpx"
	"github.com/binkyhq/binky/sdk"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want config
		err  string
	}{
		{"empty", nil, config{}, ""},
		{"per_slice", map[string]any{"user": "per-slice", "amqp_port": int64(5673), "amqp_host": "mq.local"}, config{user: PerSlice, amqpPort: 5673, amqpHost: "mq.local"}, ""},
		{"json_port", map[string]any{"amqp_port": float64(5672), "amqps": true}, config{amqpPort: 5672, amqps: true}, ""},
		{"json_number_port", map[string]any{"amqp_port": json.Number("5673")}, config{amqpPort: 5673}, ""},
		{"bad_port", map[string]any{"amqp_port": 70000}, config{}, "amqp_port"},
		{"fraction_port", map[string]any{"amqp_port": 56.5}, config{}, "amqp_port"},
		{"bad_user", map[string]any{"user": 3}, config{}, "config user"},
		{"bad_host", map[string]any{"amqp_host": "a/b"}, config{}, "amqp_host"},
		{"unknown", map[string]any{"vhost": "x"}, config{}, `unknown config key "vhost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || sdk.CodeOf(err) != sdk.CodeInvalid {
					t.Fatalf("error %v; want code invalid mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil || *got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestAMQPURL(t *testing.T) {
	for _, tc := range []struct {
		cfg                  config
		user, pw, vhost, out string
	}{
		{config{}, "guest", "guest", "acme_main", "amqp://guest:guest@127.0.0.1:5672/acme_main"},
		{config{amqps: true}, "u", "p/w@", "acme_main", "amqps://u:p%2Fw%40@127.0.0.1:5671/acme_main"},
		{config{amqpHost: "::1", amqpPort: 5673}, "u", "", "a_b", "amqp://u@[::1]:5673/a_b"},
	} {
		if got := amqpURL("127.0.0.1", &tc.cfg, tc.user, tc.pw, tc.vhost); got != tc.out {
			t.Errorf("amqpURL = %s; want %s", got, tc.out)
		}
	}
}

// FuzzConfig: whatever the config table and admin URL, target either
// fails with code invalid and no piece of the admin password of
// sdk.MinScrub bytes, or the address resolve would answer parses back
// through parseAMQP to the same host, port, user, password and vhost.
func FuzzConfig(f *testing.F) {
	f.Add("http://guest:guest@127.0.0.1:15672", "per-slice", "", int64(0), false, "p4ssw0rd")
	f.Add("http://u:S3cr3t/9@h:15672", "app", "mq.example", int64(5671), true, "S3cr3t/9")
	f.Add("https://u:p%40ss@[::1]:15671/prefix", "", "::1", int64(5672), false, "p@ss")
	f.Add("http://u:abc#def@h", "", "", int64(-1), false, "abc#def")
	f.Fuzz(func(t *testing.T, admin, user, host string, port int64, tls bool, pw string) {
		cfg := map[string]any{}
		if user != "" {
			cfg[KeyUser] = user
		}
		if host != "" {
			cfg[KeyAMQPHost] = host
		}
		if port != 0 {
			cfg[KeyAMQPPort] = port
		}
		cfg[KeyAMQPS] = tls
		s, err := target(&sdk.Target{Slice: "acme_main", AdminURL: admin, Config: cfg})
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeInvalid {
				t.Fatalf("code %q; want invalid (%v)", sdk.CodeOf(err), err)
			}
			msg := httpx.Fail("provision rabbitmq slice \"acme_main\"", admin, err, hints).Error()
			for _, p := range sdk.AdminPasswords(admin) {
				if q := leaked(msg, p); q != "" {
					t.Fatalf("error %q shows %q of the admin password", msg, q)
				}
			}
			return
		}
		out := amqpURL(s.ep.Base.Hostname(), s.cfg, s.user(), pw, s.vhost)
		back, err := parseAMQP(out)
		if err != nil {
			t.Fatalf("address %q does not parse back: %v", out, err)
		}
		wantHost := s.cfg.amqpHost
		if wantHost == "" {
			wantHost = s.ep.Base.Hostname()
		}
		if back.user != s.user() || back.password != pw || back.vhost != s.vhost || back.host != wantHost {
			t.Fatalf("address %q reads back as %+v", out, back)
		}
	})
}

// leaked returns a piece of pw of sdk.MinScrub bytes that msg holds
// outside its masks, or "". Pieces holding 'x' are skipped: next to a
// mask they may be its own letters.
func leaked(msg, pw string) string {
	for _, part := range strings.Split(msg, sdk.ScrubMask) {
		for i := 0; i+sdk.MinScrub <= len(pw); i++ {
			if p := pw[i : i+sdk.MinScrub]; !strings.Contains(p, "x") && strings.Contains(part, p) {
				return p
			}
		}
	}
	return ""
}
