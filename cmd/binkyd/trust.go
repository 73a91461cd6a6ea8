package main

import (
	"errors"
	"fmt"
	"github.com/binkyhq/binky/cmd/internal/cli"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/certs"
	"github.com/binkyhq/binky/sdk/names"
)

// trustCmd installs (or removes) Binky's local CA in the trust stores, so
// browsers accept https://<svc>.<wt>.<project>.localhost.
type trustCmd struct{ cli.Trust }

func (c *trustCmd) Run(g *globals) error {
	log := hclog.New(&hclog.LoggerOptions{Name: "trust", Level: hclog.Info, Output: os.Stderr})
	dir := filepath.Join(g.home, "certs")
	if c.Uninstall {
		ca, err := certs.LoadCA(dir)
		if errors.Is(err, os.ErrNotExist) {
			fmt.Printf("no local CA under %s: nothing to remove\n", dir)
			return nil
		}
		if err != nil {
			return err
		}
		for _, ca := range append([]*certs.CA{ca}, certs.ZoneCAs(dir)...) {
			if err := certs.Uninstall(ca, log); err != nil {
				return err
			}
			fmt.Printf("removed %s from the trust stores\n", ca.Cert.Subject.CommonName)
		}
		return nil
	}
	ca, err := certs.LoadOrCreateCA(dir)
	if err != nil {
		return err
	}
	stores, err := certs.Install(ca, log)
	if err != nil {
		return err
	}
	fmt.Printf("trusted %s (%s) in: %s\nrestart open browsers to pick it up; it signs only *.localhost names\n",
		ca.Cert.Subject.CommonName, ca.CertPath, strings.Join(stores, ", "))
	// The CA of each other apex a project uses (apex = "test"), made at
	// the first https request for one of its names: each is its own root,
	// signing only its zone.
	for _, z := range c.Zone {
		zone, ok := names.PrivateZone(strings.Trim(strings.ToLower(z), "."))
		if !ok || zone == "localhost" {
			if !ok {
				return fmt.Errorf("trust --zone %s: binky certifies names only under test, example, internal and home.arpa (beside localhost): a CA for a public zone could vouch for real sites", z)
			}
			continue
		}
		if _, err := certs.LoadOrCreateZoneCA(dir, zone); err != nil {
			return err
		}
	}
	for _, zca := range certs.ZoneCAs(dir) {
		stores, err := certs.Install(zca, log)
		if err != nil {
			return err
		}
		fmt.Printf("trusted %s (%s) in: %s; it signs only *.%s names\n", zca.Cert.Subject.CommonName, zca.CertPath, strings.Join(stores, ", "), zca.Zone())
	}
	return nil
}
