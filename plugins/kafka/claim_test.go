package kafkaadapter

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// owned is target with an owner.
func owned(admin, slice, owner, label string, cfg map[string]any) sdk.Target {
	t := target(admin, slice, cfg)
	t.Owner, t.OwnerLabel = owner, label
	return t
}

// testClient is a client of the cluster, closed when the test ends.
func testClient(t *testing.T, admin string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	c, err := parseURL(admin)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// markerRecords reads every record value of a marker topic straight from
// the cluster, in order; nil when the topic holds none.
func markerRecords(t *testing.T, admin, topic string) []string {
	t.Helper()
	ctx := t.Context()
	ends, err := kadm.NewClient(testClient(t, admin)).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list the end offset of %s: %v", topic, err)
	}
	end, ok, err := partitionOffset(ends, nil, topic)
	if err != nil || !ok || end == 0 {
		return nil
	}
	cl := testClient(t, admin, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	// A bound for a broker that never serves the records, not a wait.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out []string
	for int64(len(out)) < end {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func produce(t *testing.T, admin, topic, value string) {
	t.Helper()
	if err := testClient(t, admin).ProduceSync(t.Context(), &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// TestClaim on kfake: provision records the owner's claim as the first
// record of the topic __binky_owner.<prefix>, outside the slice's prefix;
// another owner's provision, resolve and destroy are refused with code
// conflict, naming the owning home, and leave every topic and the claim
// in place, even after that owner appended its own claim record (the first
// one counts); the owner resolves and destroys the slice, and the claim
// topic goes with it.
func TestClaim(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()
	s := testSlice(t, "claim")
	cleanupSlice(t, admin, s)
	prefix, marker := names.KafkaPrefix(s), claimTopic(names.KafkaPrefix(s))
	mine := owned(admin, s, "home-a", "/home/a/.binky (alice)", twoTopics)
	theirs := owned(admin, s, "home-b", "/home/b/.binky (bob)", twoTopics)

	if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || *r.Existed {
		t.Fatalf("provision by its owner: %+v, %v; want existed false", r, err)
	}
	if got := markerRecords(t, admin, marker); !slices.Equal(got, []string{mine.Claim()}) {
		t.Fatalf("records of %s = %q; want the one claim %q", marker, got, mine.Claim())
	}
	wantTopics := []string{prefix + "events", prefix + "orders"}
	if got, _ := freshTopics(ctx, admin, prefix); !slices.Equal(got, wantTopics) {
		t.Errorf("topics under %s = %v; want %v (the claim topic is not under the prefix)", prefix, got, wantTopics)
	}
	if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || !*r.Existed {
		t.Errorf("provision by its owner again: %+v, %v; want existed true", r, err)
	}
	if got := markerRecords(t, admin, marker); len(got) != 1 {
		t.Errorf("provision by its owner again appended to the claim: %q", got)
	}

	refused := func(what string, err error) {
		t.Helper()
		if sdk.CodeOf(err) != sdk.CodeConflict {
			t.Errorf("%s by another owner: %v; want code conflict", what, err)
			return
		}
		if msg := err.Error(); !strings.Contains(msg, "home-a") || !strings.Contains(msg, "alice") || !strings.Contains(msg, prefix) {
			t.Errorf("%s by another owner: %q; want it to name the prefix and the owning home", what, msg)
		}
	}
	check := func(when string) {
		t.Helper()
		if got, _ := freshTopics(ctx, admin, prefix); !slices.Equal(got, wantTopics) {
			t.Errorf("%s: topics under %s = %v; want %v", when, prefix, got, wantTopics)
		}
		if got := markerRecords(t, admin, marker); len(got) == 0 || got[0] != mine.Claim() {
			t.Errorf("%s: records of %s = %q; want %q first", when, marker, got, mine.Claim())
		}
	}
	b := New()
	defer b.Close()
	_, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs})
	refused("provision", err)
	_, err = b.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: theirs})
	refused("resolve", err)
	_, err = b.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
	refused("destroy", err)
	check("after the refusals")

	// A claim appended later (what a home that lost a race writes) does
	// not take the prefix over.
	produce(t, admin, marker, theirs.Claim())
	_, err = b.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: theirs})
	refused("destroy after appending its own claim", err)
	check("after a later claim was appended")
	if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: mine}); err != nil {
		t.Errorf("resolve by its owner: %v", err)
	}
	// An older host (no owner) is not checked.
	if _, err := a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
		t.Errorf("resolve with no owner: %v", err)
	}

	for range 2 {
		if _, err := a.Destroy(ctx, &sdk.DestroyRequest{Header: hdr(), Target: mine}); err != nil {
			t.Fatalf("destroy by its owner: %v", err)
		}
	}
	if got, _ := freshTopics(ctx, admin, prefix); len(got) != 0 {
		t.Errorf("topics under %s after its owner's destroy: %v", prefix, got)
	}
	if got, _ := freshTopics(ctx, admin, marker); slices.Contains(got, marker) {
		t.Errorf("claim topic %s survives its owner's destroy", marker)
	}
	// Gone, it is nobody's: the other home may make it now.
	if _, err := b.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: theirs}); err != nil {
		t.Errorf("provision by the other home after the owner destroyed it: %v", err)
	}
	if got := markerRecords(t, admin, marker); !slices.Equal(got, []string{theirs.Claim()}) {
		t.Errorf("records of %s after the other home made it again = %q; want %q", marker, got, theirs.Claim())
	}
}

// TestClaimAdopt: a prefix an older host made (topics, no claim topic) is
// adopted by the first owner that provisions it, keeping its topics, and
// then refused to others; a claim topic holding something that is not a
// claim is claimed by appending; and of two homes provisioning a new
// prefix at once exactly one gets it.
func TestClaimAdopt(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()

	legacy := testSlice(t, "legacy")
	prefix, marker := names.KafkaPrefix(legacy), claimTopic(names.KafkaPrefix(legacy))
	provisionT(t, a, admin, legacy, twoTopics)
	if got, _ := freshTopics(ctx, admin, marker); len(got) != 0 {
		t.Fatalf("provision with no owner made %v; want no claim topic", got)
	}
	produce(t, admin, prefix+"orders", "an old order")
	mine := owned(admin, legacy, "home-a", "alice", twoTopics)
	if r, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: mine}); err != nil || r.Existed == nil || !*r.Existed {
		t.Fatalf("adopt: %+v, %v; want existed true", r, err)
	}
	if got := markerRecords(t, admin, marker); !slices.Equal(got, []string{mine.Claim()}) {
		t.Errorf("records of %s after adoption = %q; want %q", marker, got, mine.Claim())
	}
	ends, err := kadm.NewClient(testClient(t, admin)).ListEndOffsets(ctx, prefix+"orders")
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if err != nil || n != 1 {
		t.Errorf("after adoption %sorders holds %d records (%v); want the 1 old order", prefix, n, err)
	}
	_, err = a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, legacy, "home-b", "bob", twoTopics)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("provision by another home after adoption: %v; want code conflict", err)
	}

	junk := testSlice(t, "junk")
	cleanupSlice(t, admin, junk)
	jmarker := claimTopic(names.KafkaPrefix(junk))
	if _, err := kadm.NewClient(testClient(t, admin)).CreateTopics(ctx, 1, 1, nil, jmarker); err != nil {
		t.Fatal(err)
	}
	produce(t, admin, jmarker, "not a claim")
	jt := owned(admin, junk, "home-a", "alice", nil)
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: jt}); err != nil {
		t.Fatalf("provision over a claim topic holding no claim: %v", err)
	}
	if got := markerRecords(t, admin, jmarker); !slices.Equal(got, []string{"not a claim", jt.Claim()}) {
		t.Errorf("records of %s = %q; want the junk, then %q", jmarker, got, jt.Claim())
	}
	_, err = a.Resolve(ctx, &sdk.ResolveRequest{Header: hdr(), Target: owned(admin, junk, "home-b", "bob", nil)})
	if sdk.CodeOf(err) != sdk.CodeConflict {
		t.Errorf("resolve by another home after claiming over junk: %v; want code conflict", err)
	}

	race := testSlice(t, "race")
	cleanupSlice(t, admin, race)
	owners := []string{"home-a", "home-b"}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, owner := range owners {
		wg.Go(func() {
			k := New()
			defer k.Close()
			_, errs[i] = k.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, race, owner, owner, twoTopics)})
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("two homes provisioning %s at once both succeeded", race)
		case err == nil:
			won = i
		case sdk.CodeOf(err) != sdk.CodeConflict:
			t.Errorf("racing provision by %s: %v; want success or code conflict", owners[i], err)
		}
	}
	if won < 0 {
		t.Fatalf("two homes provisioning %s at once: %v; want exactly one to succeed", race, errs)
	}
	if got := markerRecords(t, admin, claimTopic(names.KafkaPrefix(race))); len(got) == 0 || !strings.Contains(got[0], owners[won]) {
		t.Errorf("the race's claim records = %q; want the winner %s's first", got, owners[won])
	}
}

// TestClaimNoOwner: with no owner (an older host) nothing is recorded and
// nothing is checked: provision makes no claim topic even on a prefix
// another home claimed, and destroy of a claimed prefix deletes its topics
// and its claim topic.
func TestClaimNoOwner(t *testing.T) {
	admin := adminURL(t)
	ctx := t.Context()
	a := New()
	defer a.Close()
	s := testSlice(t, "legacy")
	cleanupSlice(t, admin, s)
	marker := claimTopic(names.KafkaPrefix(s))
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: owned(admin, s, "home-a", "alice", twoTopics)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Provision(ctx, &sdk.ProvisionRequest{Header: hdr(), Target: target(admin, s, twoTopics)}); err != nil {
		t.Errorf("provision with no owner of a claimed prefix: %v", err)
	}
	if _, err := a.Destroy(context.Background(), &sdk.DestroyRequest{Header: hdr(), Target: target(admin, s, nil)}); err != nil {
		t.Fatalf("destroy with no owner: %v", err)
	}
	if got, _ := freshTopics(ctx, admin, names.KafkaPrefix(s)); len(got) != 0 {
		t.Errorf("topics after destroy: %v", got)
	}
	if got, _ := freshTopics(ctx, admin, marker); slices.Contains(got, marker) {
		t.Errorf("claim topic %s survives destroy", marker)
	}
}
