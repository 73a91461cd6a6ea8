package kafkaadapter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-kafka.
const Name = "kafka"

// Kafka is the adapter. It is long-lived in the RPC tier: it keeps one
// admin client per admin URL across calls.
type Kafka struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Kafka { return &Kafka{servers: map[string]*server{}} }

// Describe says who the adapter is: kafka (alias redpanda), unable to
// clone, recording each slice's owner (see claimTopic).
func (*Kafka) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Aliases: []string{"redpanda"}, Clone: false, Claims: true}, nil
}

// slice is one call's target, checked.
type slice struct {
	srv    *server
	cfg    settings
	prefix string
}

func (a *Kafka) target(t *sdk.Target) (*slice, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(t.Config)
	if err != nil {
		return nil, err
	}
	srv, err := a.server(t.AdminURL)
	if err != nil {
		return nil, err
	}
	return &slice{srv: srv, cfg: cfg, prefix: names.KafkaPrefix(t.Slice)}, nil
}

// topics lists the cluster's topics whose names start with prefix,
// sorted. It asks a broker every time: kadm's ListTopics answers from the
// client's metadata cache, which can miss a topic created a moment ago.
func (s *slice) topics(ctx context.Context) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest() // no topics: all of them
	resp, err := req.RequestWith(ctx, s.srv.kgo)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	var out []string
	for _, t := range resp.Topics {
		if t.Topic == nil || !strings.HasPrefix(*t.Topic, s.prefix) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.LeaderNotAvailable) {
			return nil, fmt.Errorf("list topics: %s: %w", *t.Topic, err)
		}
		out = append(out, *t.Topic)
	}
	sort.Strings(out)
	return out, nil
}

// Provision claims the slice's prefix for the request's owner — refusing
// a prefix another owner claimed, recording the owner's claim on one that
// has none — then creates the configured topics under it. With topics
// configured it reports whether every one existed already; with none it
// checks that the cluster answers and does not tell.
func (a *Kafka) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision kafka slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	have, err := s.topics(ctx)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.claim(ctx, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if len(s.cfg.topics) == 0 {
		return &sdk.ProvisionResponse{}, nil
	}
	var missing []string
	for _, t := range s.cfg.topics {
		if name := s.prefix + t; !contains(have, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return sdk.Provisioned(true), nil
	}
	res, err := s.srv.admin.CreateTopics(ctx, s.cfg.partitions, s.cfg.replication, nil, missing...)
	if err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("create topics %s: %w", strings.Join(missing, ", "), err))
	}
	for _, name := range missing {
		r, ok := res[name]
		switch {
		case !ok:
			return nil, fail(op, req.AdminURL, fmt.Errorf("create topic %q: the broker did not answer for it", name))
		case r.Err == nil, errors.Is(r.Err, kerr.TopicAlreadyExists):
		default:
			msg := r.Err.Error()
			if r.ErrMessage != "" {
				msg += ": " + r.ErrMessage
			}
			return nil, fail(op, req.AdminURL, &topicError{fmt.Sprintf("create topic %q with %d partitions, replication %d: %s", name, s.cfg.partitions, s.cfg.replication, msg), r.Err})
		}
	}
	return sdk.Provisioned(false), nil
}

// topicError is a per-topic broker error, its message already written.
type topicError struct {
	msg string
	err error
}

func (e *topicError) Error() string { return e.msg }
func (e *topicError) Unwrap() error { return e.err }

func contains(sorted []string, s string) bool {
	i := sort.SearchStrings(sorted, s)
	return i < len(sorted) && sorted[i] == s
}

// Resolve answers the admin URL (the bootstrap brokers) and values prefix
// and bootstrap, once it has checked that no other owner claimed the
// prefix. With no owner it connects to nothing.
func (a *Kafka) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve kafka slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	res := &sdk.ResolveResponse{
		Address: s.srv.cl.url(),
		Values:  map[string]string{"prefix": s.prefix, "bootstrap": strings.Join(s.srv.cl.brokers, ",")},
	}
	// The SASL credentials, for a client configured from parts; brokers
	// are in bootstrap (host and port would name only one of them).
	res.SetValue(sdk.ValueUser, s.srv.cl.user)
	res.SetSecret(sdk.ValuePassword, s.srv.cl.pass)
	return res, nil
}

// Clone is not offered: a Kafka slice is built by provision, migrate and
// seed.
func (*Kafka) Clone(_ context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	return nil, sdk.Errorf(sdk.CodeUnsupported, "clone kafka slice %q from %q: the kafka adapter does not clone (copying topics means re-producing every record); build the slice with provision, migrate and seed", req.Slice, req.Source)
}

// Destroy deletes every topic under the slice's prefix, then the prefix's
// claim topic, and nothing else; when another owner claimed the prefix it
// deletes nothing. A slice with no topics left is fine.
func (a *Kafka) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy kafka slice %q", req.Slice)
	s, err := a.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	topics, err := s.topics(ctx)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := deleteUnder(ctx, s, topics); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	// The claim goes last: a destroy that fails half-way leaves the
	// remaining topics claimed.
	if err := s.dropClaim(ctx); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.DestroyResponse{}, nil
}

// deleteUnder deletes topics, each checked again to lie under the slice's
// prefix: a topic outside it is never sent to the broker.
func deleteUnder(ctx context.Context, s *slice, topics []string) error {
	var del []string
	for _, t := range topics {
		if !underPrefix(t, s.prefix) {
			return fmt.Errorf("refusing to delete topic %q: it is not under the slice's prefix %q", t, s.prefix)
		}
		del = append(del, t)
	}
	if len(del) == 0 {
		return nil
	}
	res, err := s.srv.admin.DeleteTopics(ctx, del...)
	if err != nil {
		return fmt.Errorf("delete topics %s: %w", strings.Join(del, ", "), err)
	}
	for _, t := range del {
		if r, ok := res[t]; ok && r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			return &topicError{fmt.Sprintf("delete topic %q: %v", t, r.Err), r.Err}
		}
	}
	return nil
}

// underPrefix: t is a topic of the slice whose prefix is prefix (a
// non-empty name after the prefix, which ends in '.').
func underPrefix(t, prefix string) bool {
	return strings.HasSuffix(prefix, ".") && len(t) > len(prefix) && strings.HasPrefix(t, prefix)
}

// Close closes every admin client the adapter opened.
func (a *Kafka) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, s := range a.servers {
		s.kgo.Close()
		delete(a.servers, k)
	}
	return nil
}

var _ sdk.Adapter = (*Kafka)(nil)
