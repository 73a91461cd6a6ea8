package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/binkyhq/binky/host/daemon"
)

// TestDaemonOptionsFromTheEnvironment: binkyd reads each of the daemon's
// variables into its option; an unset one is the option's zero (the
// default), a bad duration is named and left at the default, and a bad
// BINKY_TRIM_AFTER refuses the start.
func TestDaemonOptionsFromTheEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want daemon.Options
		warn string
		err  string
	}{
		{name: "unset", env: nil, want: daemon.Options{}},
		{name: "every variable", env: map[string]string{
			"BINKY_PROXY_ADDR": "off", "BINKY_PROXY_TLS_ADDR": "127.0.0.1:0", "BINKY_TRIM_AFTER": "off",
			"BINKY_HEALTH_EVERY": "100ms", "BINKY_NO_CGROUPS": "1",
			"BINKY_TEST_PRESSURE": "/tmp/p.json", "BINKY_TEST_PRESSURE_INTERVAL": "250ms", "BINKY_TEST_ADMISSION": "off",
		}, want: daemon.Options{
			ProxyAddr: "off", ProxyTLSAddr: "127.0.0.1:0", TrimAfter: -1,
			HealthEvery: 100 * time.Millisecond, NoCgroups: true,
			PressureFile: "/tmp/p.json", PressureInterval: 250 * time.Millisecond, AdmissionOff: true,
		}},
		{name: "trim after a duration", env: map[string]string{"BINKY_TRIM_AFTER": "5s"}, want: daemon.Options{TrimAfter: 5 * time.Second}},
		{name: "admission on", env: map[string]string{"BINKY_TEST_ADMISSION": "on"}, want: daemon.Options{}},
		{name: "bad health interval", env: map[string]string{"BINKY_HEALTH_EVERY": "soon"}, want: daemon.Options{},
			warn: `binkyd: BINKY_HEALTH_EVERY="soon" is not a positive duration; using the default`},
		{name: "negative pressure interval", env: map[string]string{"BINKY_TEST_PRESSURE_INTERVAL": "-1s"}, want: daemon.Options{},
			warn: `binkyd: BINKY_TEST_PRESSURE_INTERVAL="-1s" is not a positive duration; using the default`},
		{name: "bad trim", env: map[string]string{"BINKY_TRIM_AFTER": "later"}, err: `BINKY_TRIM_AFTER="later": want a duration such as 20s, or off`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warn bytes.Buffer
			got, err := daemonOptions("/the/home", func(k string) string { return tt.env[k] }, &warn)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Home != "/the/home" || got.Version == "" {
				t.Errorf("home %q, version %q; want /the/home and binkyd's version", got.Home, got.Version)
			}
			got.Home, got.Version = "", ""
			if got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
			if w := strings.TrimSpace(warn.String()); w != tt.warn {
				t.Errorf("warned %q; want %q", w, tt.warn)
			}
		})
	}
}
