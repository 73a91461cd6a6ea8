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
		if err := certs.Uninstall(ca, log); err != nil {
			return err
		}
		fmt.Printf("removed %s from the trust stores\n", ca.Cert.Subject.CommonName)
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
	return nil
}
