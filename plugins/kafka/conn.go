package kafkaadapter

import (
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/binkyhq/binky/sdk"
)

// server is one admin URL's admin client. It lives as long as the process.
type server struct {
	cl    *cluster
	kgo   *kgo.Client
	admin *kadm.Client
	opts  []kgo.Opt // how kgo was made: brokers, TLS and SASL
}

// client is a new client of the admin URL's cluster, with kgo's options
// and extra; the caller closes it. The claim's marker topic is written and
// read with one, so the long-lived admin client never produces or
// consumes, and never keeps a marker topic's metadata after it is deleted.
func (s *server) client(extra ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(slices.Clip(s.opts), extra...)...)
}

// server returns the admin client of an admin URL, creating it on first
// use. The client connects lazily.
func (a *Kafka) server(raw string) (*server, error) {
	cl, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.servers[raw]; ok {
		return s, nil
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cl.brokers...),
		kgo.DialTimeout(5 * time.Second),
		kgo.RequestRetries(2),
		kgo.RetryTimeout(10 * time.Second),
		kgo.MetadataMinAge(time.Second),
		// The one record the adapter produces (a claim) needs no
		// idempotence, nor the ACL it takes on some clusters.
		kgo.DisableIdempotentWrite(),
	}
	if cl.tls {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	switch cl.sasl {
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: cl.user, Pass: cl.pass}.AsMechanism()))
	case "scram-sha-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: cl.user, Pass: cl.pass}.AsSha256Mechanism()))
	case "scram-sha-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: cl.user, Pass: cl.pass}.AsSha512Mechanism()))
	}
	k, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, invalid(raw, "admin_url: %v", err)
	}
	s := &server{cl: cl, kgo: k, admin: kadm.NewClient(k), opts: opts}
	a.servers[raw] = s
	return s, nil
}

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every password of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: sdk.ScrubAdmin(op+": "+se.Message, raw)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: sdk.ScrubAdmin(oneLine(op+": "+err.Error())+hint(code), raw)}
}

// classify picks the reply code of a client or broker error.
func classify(err error) sdk.Code {
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.IllegalSaslState),
		errors.Is(err, kerr.UnsupportedSaslMechanism):
		return sdk.CodeAuth
	case errors.Is(err, kerr.InvalidTopicException), errors.Is(err, kerr.InvalidReplicationFactor),
		errors.Is(err, kerr.InvalidPartitions), errors.Is(err, kerr.InvalidConfig):
		return sdk.CodeInvalid
	case sdk.IsNetworkError(err), errors.Is(err, kgo.ErrClientClosed), strings.Contains(err.Error(), "unable to dial"):
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the Kafka-protocol broker running, and are admin_url's hosts and ports right?)"
	case sdk.CodeAuth:
		return " (check admin_url's user, password and ?sasl= mechanism; the user needs to describe, create and delete topics)"
	}
	return ""
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
