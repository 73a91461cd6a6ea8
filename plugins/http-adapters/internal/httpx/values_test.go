package httpx

import (
	"maps"
	"slices"
	"testing"
)

func TestResolved(t *testing.T) {
	for addr, want := range map[string]map[string]string{
		"amqp://acme_main:pw-123@127.0.0.1:5672/acme_main": {"user": "acme_main", "password": "pw-123", "host": "127.0.0.1", "port": "5672", "vhost": "v"},
		"http://elastic:pw@es.local":                       {"user": "elastic", "password": "pw", "host": "es.local", "port": "80", "vhost": "v"},
		"https://:API-KEY@q.example.com":                   {"user": "", "password": "API-KEY", "host": "q.example.com", "port": "443", "vhost": "v"},
		"amqp://guest@[::1]:5671/x":                        {"user": "guest", "password": "", "host": "::1", "port": "5671", "vhost": "v"},
	} {
		r := Resolved(addr, map[string]string{"vhost": "v"})
		if r.Address != addr || !maps.Equal(r.Values, want) || !slices.Equal(r.Secret, []string{"password"}) {
			t.Errorf("Resolved(%q) = %q %v %v; want values %v and [password]", addr, r.Address, r.Values, r.Secret, want)
		}
	}
}
