package kafkaadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// defaultURL is the kfake cluster scripts/testenv starts: a Kafka-protocol
// cluster in memory (franz-go's kfake), not Apache Kafka.
const defaultURL = "kafka://127.0.0.1:9092"

// adminURL is the cluster the tests carve prefixes from:
// BINKY_TEST_KAFKA_ADDR, else scripts/testenv's kfake. A cluster that
// does not answer fails the test when CI=true and skips it otherwise.
func adminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_KAFKA_ADDR")
	if u == "" {
		u = defaultURL
	}
	if !strings.Contains(u, "://") {
		u = "kafka://" + u
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if _, err := freshTopics(ctx, u, ""); err != nil {
		adaptertest.MissingServer(t, "the Kafka-protocol cluster (kfake) is not reachable at "+sdk.ScrubAdmin(u, u)+": "+sdk.ScrubAdmin(err.Error(), u)+"; run scripts/testenv up (builds and starts kfake on 127.0.0.1:9092) or set BINKY_TEST_KAFKA_ADDR")
	}
	return u
}

// freshTopics lists the topics under prefix with a new client: a
// long-lived one may still list deleted topics from cached metadata.
func freshTopics(ctx context.Context, raw, prefix string) ([]string, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers...), kgo.RequestRetries(1), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ts, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range ts.Names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func testSlice(t *testing.T, suffix string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "bt_" + hex.EncodeToString(b) + "_" + suffix
}

func target(admin, slice string, cfg map[string]any) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin, Config: cfg}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

// cleanupSlice destroys a slice when the test ends, with a fresh adapter.
func cleanupSlice(t *testing.T, admin, slice string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a := New()
		defer a.Close()
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, slice, nil)}); err != nil {
			t.Errorf("cleanup: destroy %s: %v", slice, err)
		}
	})
}

func provisionT(t *testing.T, a *Kafka, admin, slice string, cfg map[string]any) *sdk.ProvisionResponse {
	t.Helper()
	cleanupSlice(t, admin, slice)
	r, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, slice, cfg)})
	if err != nil {
		t.Fatalf("provision %s: %v", slice, err)
	}
	return r
}
