package certs

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/smallstep/truststore"
)

// trustPrefix names Binky's root inside trust stores ("Binky Local CA
// <serial>"), so it is recognisable in a browser's certificate list.
const trustPrefix = "Binky Local CA "

// Install adds ca to the system trust store and, where their tools are
// present, to the NSS stores of Firefox and Chromium (certutil) and Java's
// (keytool with JAVA_HOME). The system store must succeed; a browser store
// that fails is logged and reported as skipped. It returns the stores the CA
// was installed into.
func Install(ca *CA, log hclog.Logger) ([]string, error) {
	if err := truststore.Install(ca.Cert, truststore.WithPrefix(trustPrefix)); err != nil {
		return nil, fmt.Errorf("install local CA %s into the system trust store: %w (run as root or with sudo)", ca.CertPath, err)
	}
	done := []string{"system"}
	for _, t := range extraStores() {
		if err := t.PreCheck(); err != nil {
			log.Debug("trust store not present", "store", t.Name(), "reason", err)
			continue
		}
		err := truststore.Install(ca.Cert, truststore.WithPrefix(trustPrefix), truststore.WithNoSystem(), truststore.WithTrust(t))
		if err != nil {
			log.Warn("could not install local CA into a browser trust store", "store", t.Name(), "error", err)
			continue
		}
		done = append(done, t.Name())
	}
	return done, nil
}

// Uninstall removes ca from every store Install may have put it in. It
// returns the first error, after trying all of them.
func Uninstall(ca *CA, log hclog.Logger) error {
	var errs []error
	for _, t := range extraStores() {
		if err := t.PreCheck(); err != nil {
			continue
		}
		err := truststore.Uninstall(ca.Cert, truststore.WithPrefix(trustPrefix), truststore.WithNoSystem(), truststore.WithTrust(t))
		if err != nil {
			errs = append(errs, fmt.Errorf("remove local CA from the %s trust store: %w", t.Name(), err))
		}
	}
	if err := truststore.Uninstall(ca.Cert, truststore.WithPrefix(trustPrefix)); err != nil {
		errs = append(errs, fmt.Errorf("remove local CA from the system trust store: %w (run as root or with sudo)", err))
	}
	return errors.Join(errs...)
}

// extraStores are the non-system stores whose tools are installed.
func extraStores() []truststore.Trust {
	var ts []truststore.Trust
	if t, err := truststore.NewNSSTrust(); err == nil {
		ts = append(ts, t)
	}
	if t, err := truststore.NewJavaTrust(); err == nil {
		ts = append(ts, t)
	}
	return ts
}
