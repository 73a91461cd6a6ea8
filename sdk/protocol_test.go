package sdk

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"testing"
)

func TestSetConnParts(t *testing.T) {
	for _, tc := range []struct {
		raw, port string
		want      map[string]string
	}{
		{"mysql://root:pw%40x@127.0.0.1:3306/db", "3306", map[string]string{"user": "root", "password": "pw@x", "host": "127.0.0.1", "port": "3306"}},
		{"postgres://postgres@db.local/x", "5432", map[string]string{"user": "postgres", "password": "", "host": "db.local", "port": "5432"}},
		{"mysql://[::1]:3307/", "3306", map[string]string{"user": "", "password": "", "host": "::1", "port": "3307"}},
		{"mysql://u:p@/?socket=/run/m.sock", "3306", map[string]string{"user": "u", "password": "p"}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			var r ResolveResponse
			r.SetConnParts(u, tc.port)
			if !maps.Equal(r.Values, tc.want) {
				t.Errorf("values = %v; want %v", r.Values, tc.want)
			}
			if !slices.Equal(r.Secret, []string{"password"}) {
				t.Errorf("secret = %v; want [password]", r.Secret)
			}
		})
	}
}

func TestSetSecretOnce(t *testing.T) {
	var r ResolveResponse
	r.SetSecret("password", "a")
	r.SetSecret("password", "b")
	r.SetValue("database", "d")
	if got, want := r.Secret, []string{"password"}; !slices.Equal(got, want) {
		t.Errorf("secret = %v; want %v", got, want)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"address":"","values":{"database":"d","password":"b"},"secret":["password"]}`; got != want {
		t.Errorf("json = %s; want %s", got, want)
	}
	b, _ = json.Marshal(&ResolveResponse{Address: "x://y"})
	if got, want := string(b), `{"address":"x://y"}`; got != want {
		t.Errorf("json = %s; want %s", got, want)
	}
}
