package kafkaadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binkyhq/binky/sdk"
)

// claimTopicPrefix starts the name of every marker topic: the topic that
// records which binky home owns a slice's prefix. Kafka keeps no metadata
// on a prefix, and a topic config cannot hold free text (brokers refuse a
// config name they do not know), so the claim is the first record of a
// one-partition topic named for the prefix. The name starts with "__",
// which no slice's prefix does (slice names start with a letter or
// digit): no slice's destroy deletes another's marker, and an application
// that subscribes to its own prefix never consumes its marker.
const claimTopicPrefix = "__binky_owner."

// claimKey is the key of a claim record.
const claimKey = "binky-owner"

// claimReadTimeout bounds fetching a marker topic's records once its
// offsets have said they are there; it guards against a broker that never
// serves them, not against a slow one.
const claimReadTimeout = 30 * time.Second

// claimTopicConfigs keep a marker topic's records for ever: the claim is
// the first claim record, so retention must never delete it, nor
// compaction keep a later record in its place.
func claimTopicConfigs() map[string]*string {
	v := func(s string) *string { return &s }
	return map[string]*string{"cleanup.policy": v("delete"), "retention.ms": v("-1"), "retention.bytes": v("-1")}
}

// claimTopic is the marker topic of the slice whose prefix is prefix:
// "__binky_owner.<prefix without its final '.'>".
func claimTopic(prefix string) string {
	return claimTopicPrefix + strings.TrimSuffix(prefix, ".")
}

// what names the slice's prefix and cluster in a refusal.
func (s *slice) what() string {
	return fmt.Sprintf("topic prefix %q on %s", s.prefix, strings.Join(s.srv.cl.brokers, ","))
}

// readClaim returns the claim recorded for the slice's prefix: the first
// record of its marker topic that holds a claim, or "" when the topic is
// missing or holds none. It creates nothing.
func (s *slice) readClaim(ctx context.Context) (string, error) {
	topic := claimTopic(s.prefix)
	// A client of its own: the admin client's metadata cache can still
	// say the topic is missing a moment after it was made, and this one
	// consumes the topic from its start.
	cl, err := s.srv.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return "", readErr(topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	start, ok, err := partitionOffset(starts, err, topic)
	if err != nil || !ok {
		return "", readErr(topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	end, ok, err := partitionOffset(ends, err, topic)
	if err != nil || !ok || end <= start {
		return "", readErr(topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, claimReadTimeout)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return "", readErr(topic, fmt.Errorf("fetch offsets %d to %d: %w", start, end-1, err))
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return "", readErr(topic, errs[0].Err)
		}
		claim, last := "", int64(-1)
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := sdk.ClaimOwner(string(r.Value)); ok && claim == "" {
				claim = string(r.Value)
			}
			last = max(last, r.Offset)
		})
		if claim != "" || last >= end-1 {
			return claim, nil
		}
	}
}

func readErr(topic string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("read the owner claim from topic %q: %w", topic, err)
}

// partitionOffset reads partition 0's offset of topic out of a kadm
// listing and its error; ok is false when the topic does not exist.
func partitionOffset(l kadm.ListedOffsets, err error, topic string) (off int64, ok bool, _ error) {
	if err != nil {
		return 0, false, err
	}
	if p, found := l[topic][0]; found {
		return p.Offset, p.Err == nil, p.Err
	}
	if p, found := l[topic][-1]; found && !errors.Is(p.Err, kerr.UnknownTopicOrPartition) {
		return 0, false, p.Err
	}
	return 0, false, nil
}

// checkClaim refuses t when another owner claimed the slice's prefix. It
// reads nothing for a target with no owner (an older host).
func (s *slice) checkClaim(ctx context.Context, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	have, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(), have)
}

// claim makes sure the slice's prefix is claimed, and by t: it refuses
// another owner's claim, and records t's when there is none (adopting a
// prefix an older host made, or before the first topic is made). Two homes
// racing to claim a prefix both append to the marker topic; the first
// record wins, and the other home reads it back and is refused. It does
// nothing for a target with no owner.
func (s *slice) claim(ctx context.Context, t *sdk.Target) error {
	mine := t.Claim()
	if mine == "" {
		return nil
	}
	have, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	if have != "" {
		return t.CheckClaim(s.what(), have)
	}
	if err := s.writeClaim(ctx, mine); err != nil {
		return err
	}
	got, err := s.readClaim(ctx)
	if err != nil {
		return err
	}
	if got == "" {
		return fmt.Errorf("record the owner claim in topic %q: no claim reads back after writing one", claimTopic(s.prefix))
	}
	return t.CheckClaim(s.what(), got)
}

// writeClaim appends claim to the slice's marker topic, making the topic
// (one partition, the slice's replication, records kept for ever) when it
// is not there.
func (s *slice) writeClaim(ctx context.Context, claim string) error {
	topic := claimTopic(s.prefix)
	res, err := s.srv.admin.CreateTopics(ctx, 1, s.cfg.replication, claimTopicConfigs(), topic)
	if err != nil {
		return fmt.Errorf("create the owner claim's topic %q: %w", topic, err)
	}
	if r, ok := res[topic]; ok && r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
		msg := r.Err.Error()
		if r.ErrMessage != "" {
			msg += ": " + r.ErrMessage
		}
		return &topicError{fmt.Sprintf("create the owner claim's topic %q with replication %d: %s", topic, s.cfg.replication, msg), r.Err}
	}
	cl, err := s.srv.client()
	if err != nil {
		return fmt.Errorf("record the owner claim in topic %q: %w", topic, err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(claimKey), Value: []byte(claim)}).FirstErr(); err != nil {
		return fmt.Errorf("record the owner claim in topic %q: %w", topic, err)
	}
	return nil
}

// dropClaim deletes the slice's marker topic; one that is not there is
// fine.
func (s *slice) dropClaim(ctx context.Context) error {
	topic := claimTopic(s.prefix)
	res, err := s.srv.admin.DeleteTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("delete the owner claim's topic %q: %w", topic, err)
	}
	if r, ok := res[topic]; ok && r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
		return &topicError{fmt.Sprintf("delete the owner claim's topic %q: %v", topic, r.Err), r.Err}
	}
	return nil
}
