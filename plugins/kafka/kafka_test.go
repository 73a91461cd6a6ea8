package kafkaadapter

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
	"github.com/binkyhq/binky/sdk/names"
)

var twoTopics = map[string]any{KeyTopics: []any{"orders", "events"}, KeyPartitions: float64(3)}

// TestConformance runs the sdk's conformance suite against the built
// binary on kfake (a Kafka-protocol cluster, not Apache Kafka), under the
// name kafka and the alias redpanda, with topics configured (provision
// reports existed) and without.
func TestConformance(t *testing.T) {
	admin := adminURL(t)
	bin := adaptertest.Binary(t, "binky-adapter-kafka")
	for _, tc := range []struct {
		name, adapter string
		cfg           map[string]any
	}{
		{"kafka_topics", "kafka", twoTopics},
		{"redpanda_prefix_only", "redpanda", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adaptertest.Test(t, adaptertest.Options{Binary: bin, Adapter: tc.adapter, AdminURL: admin, Config: tc.cfg})
		})
	}
}

// TestTopicsUnderPrefix on kfake: provision creates the configured topics
// under the prefix with their partitions (existed false, then true; and
// false again after one vanished), resolve gives the prefix and bootstrap,
// and destroy deletes every topic under the prefix — configured or made
// by the application — while a neighbour slice's topics and a topic that
// merely shares the slice's text survive.
func TestTopicsUnderPrefix(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()
	s, neighbour := testSlice(t, "one"), ""
	neighbour = s + "x"
	prefix := names.KafkaPrefix(s)
	if r := provisionT(t, a, admin, s, twoTopics); r.Existed == nil || *r.Existed {
		t.Errorf("first provision: existed %v; want false", r.Existed)
	}
	if r := provisionT(t, a, admin, s, twoTopics); r.Existed == nil || !*r.Existed {
		t.Errorf("second provision: existed %v; want true", r.Existed)
	}
	provisionT(t, a, admin, neighbour, map[string]any{KeyTopics: []any{"orders"}})
	got, err := freshTopics(ctx, admin, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{prefix + "events", prefix + "orders"}; !slices.Equal(got, want) {
		t.Fatalf("topics under %s: %v; want %v", prefix, got, want)
	}
	c, _ := parseURL(admin)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	det, err := adm.ListTopics(ctx, prefix+"orders")
	if err != nil || len(det[prefix+"orders"].Partitions) != 3 {
		t.Errorf("%sorders has %d partitions (%v); want 3", prefix, len(det[prefix+"orders"].Partitions), err)
	}
	// A topic the application made under the prefix, and one outside it
	// that shares the slice's text without the '.'.
	outside := strings.TrimSuffix(prefix, ".") + "-other"
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, prefix+"app.made", outside); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.DeleteTopics(context.Background(), outside) })

	r, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, s, twoTopics)})
	if err != nil || r.Values["prefix"] != prefix || r.Values["bootstrap"] != strings.Join(c.brokers, ",") || r.Address != admin {
		t.Errorf("resolve = %+v, %v; want address %s, prefix %s", r, err, admin, prefix)
	}

	// A topic vanished behind binky's back: provision says existed false.
	if _, err := adm.DeleteTopics(ctx, prefix+"events"); err != nil {
		t.Fatal(err)
	}
	if r := provisionT(t, New(), admin, s, twoTopics); r.Existed == nil || *r.Existed {
		t.Errorf("provision after a topic vanished: existed %v; want false", r.Existed)
	}

	for i := range 2 {
		if _, err := New().Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
			t.Fatalf("destroy %d: %v", i+1, err)
		}
	}
	if got, _ := freshTopics(ctx, admin, prefix); len(got) != 0 {
		t.Errorf("topics under %s after destroy: %v; want none", prefix, got)
	}
	for _, keep := range []string{names.KafkaPrefix(neighbour) + "orders", outside} {
		if got, _ := freshTopics(ctx, admin, keep); !slices.Contains(got, keep) {
			t.Errorf("destroy of %s deleted %s, which is not under its prefix", s, keep)
		}
	}
}

// TestDeleteGuard: deleteUnder refuses a topic outside the prefix before
// sending anything.
func TestDeleteGuard(t *testing.T) {
	s := &slice{prefix: "acme-main."}
	for _, topic := range []string{"acme-main", "acme-mainx.t", "other.t", "acme-main."} {
		if err := deleteUnder(context.Background(), s, []string{topic}); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("deleteUnder(%q) = %v; want a refusal", topic, err)
		}
	}
}

// TestErrorCodes: an unreachable broker, a topic name the broker refuses
// and the unbuilt ACLs each give a one-line error with the right code and
// no piece of the password.
func TestErrorCodes(t *testing.T) {
	admin := adminURL(t)
	const pw = "S3cret-Kafka-Pw"
	for _, tc := range []struct {
		name, admin, slice string
		cfg                map[string]any
		want               sdk.Code
	}{
		{"unreachable", "kafka://u:" + pw + "@127.0.0.1:1", "bt_main", nil, sdk.CodeUnreachable},
		{"not_a_slice", admin, "Not A Slice", nil, sdk.CodeInvalid},
		{"bad_topic_name", admin, "bt_main", map[string]any{KeyTopics: []any{"no/slash"}}, sdk.CodeInvalid},
		{"acls", admin, "bt_main", map[string]any{KeyACLs: true}, sdk.CodeInvalid},
		{"replication_beyond_brokers", admin, testSlice(t, "repl"), map[string]any{KeyTopics: []any{"t"}, KeyReplication: float64(5)}, sdk.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New()
			defer a.Close()
			_, err := a.Provision(t.Context(), &sdk.ProvisionRequest{Header: hdr(), Target: target(tc.admin, tc.slice, tc.cfg)})
			if err == nil {
				cleanupSlice(t, tc.admin, tc.slice)
				t.Fatal("provision succeeded; want an error")
			}
			if got := sdk.CodeOf(err); got != tc.want {
				t.Errorf("code %q; want %q (%v)", got, tc.want, err)
			}
			if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), pw[:6]) {
				t.Errorf("error spans lines or shows the password: %q", err)
			}
			t.Log(err)
		})
	}
}
