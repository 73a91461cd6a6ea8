package adaptertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// Check names, in the order they run.
const (
	checkDescribe  = "describe"
	checkProvision = "provision"
	checkResolve   = "resolve"
	checkClone     = "clone"
	checkSize      = "size"
	checkDestroy   = "destroy"
	checkClaim     = "claim"
	checkInvalid   = "invalid"
	checkProtocol  = "protocol"
	checkRPC       = "rpc"
)

type check struct {
	name string
	tier string
	run  func(context.Context) (string, error)
}

func (r *runner) checks() []check {
	return []check{
		{checkDescribe, TierOneShot, r.checkDescribe},
		{checkProvision, TierOneShot, r.checkProvision},
		{checkResolve, TierOneShot, r.checkResolve},
		{checkClone, TierOneShot, r.checkClone},
		{checkSize, TierOneShot, r.checkSize},
		{checkDestroy, TierOneShot, r.checkDestroy},
		{checkClaim, TierOneShot, r.checkClaim},
		{checkInvalid, TierOneShot, r.checkInvalid},
		{checkProtocol, TierOneShot, r.checkProtocol},
		{checkRPC, TierBoth, r.checkRPC},
	}
}

// checkDescribe: protocol, name, aliases and the two booleans, with the
// right JSON types.
func (r *runner) checkDescribe(ctx context.Context) (string, error) {
	ctx, cancel := r.call(ctx)
	defer cancel()
	req, _ := json.Marshal(sdk.DescribeRequest{Header: sdk.Header{Protocol: sdk.Protocol, Adapter: r.opts.Adapter}})
	reply, err := r.bin.CallRaw(ctx, sdk.CallDescribe, req)
	if err != nil {
		return "", err
	}
	var d sdk.DescribeResponse
	if err := sdk.DecodeReply(reply, &d); err != nil {
		return "", fmt.Errorf("describe failed: %w", err)
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(reply, &fields)
	for _, k := range []string{"clone", "rpc"} {
		if v := string(fields[k]); v != "true" && v != "false" {
			return "", fmt.Errorf("describe reply: %q must be true or false; got %s", k, orMissing(v))
		}
	}
	switch {
	case d.Protocol < 1 || d.Protocol > sdk.Protocol:
		return "", fmt.Errorf("describe reply: protocol %d; want 1..%d", d.Protocol, sdk.Protocol)
	case !validName(d.Name):
		return "", fmt.Errorf("describe reply: name %q; want [a-z0-9][a-z0-9_-]*", d.Name)
	}
	for i, a := range d.Aliases {
		switch {
		case !validName(a):
			return "", fmt.Errorf("describe reply: alias %q; want [a-z0-9][a-z0-9_-]*", a)
		case a == d.Name:
			return "", fmt.Errorf("describe reply: alias %q repeats the name", a)
		case slices.Contains(d.Aliases[:i], a):
			return "", fmt.Errorf("describe reply: alias %q listed twice", a)
		}
	}
	r.desc = &d
	r.adapter = r.opts.Adapter
	if r.adapter == "" {
		r.adapter = d.Name
	}
	detail := fmt.Sprintf("name %s, protocol %d, clone %v, rpc %v", d.Name, d.Protocol, d.Clone, d.RPC)
	if len(d.Aliases) > 0 {
		detail += ", aliases " + strings.Join(d.Aliases, " ")
	}
	return detail, nil
}

// checkProvision: provisioning the same slice twice succeeds, and an
// adapter that reports whether the slice existed says false, then true.
func (r *runner) checkProvision(ctx context.Context) (string, error) {
	var existed [2]*bool
	for i := range 2 {
		res, err := r.provisionReply(ctx, r.slice)
		if err != nil {
			return "", fmt.Errorf("provision %s (attempt %d of 2): %w", r.slice, i+1, err)
		}
		existed[i] = res.Existed
	}
	switch {
	case existed[0] == nil && existed[1] == nil:
		return "slice " + r.slice + " provisioned twice (existed not reported)", nil
	case existed[0] == nil || existed[1] == nil:
		return "", fmt.Errorf("provision %s reported existed on one call and not the other; report it always or never", r.slice)
	case *existed[0] || !*existed[1]:
		return "", fmt.Errorf("provision %s reported existed=%v for a new slice and existed=%v the second time; want false, then true", r.slice, *existed[0], *existed[1])
	}
	return "slice " + r.slice + " provisioned twice (existed false, then true)", nil
}

func (r *runner) provisionReply(ctx context.Context, slice string) (*sdk.ProvisionResponse, error) {
	ctx, cancel := r.call(ctx)
	defer cancel()
	r.made[slice] = true
	res, err := client.Provision(ctx, r.bin, &sdk.ProvisionRequest{Header: r.header(), Target: r.target(slice)})
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &sdk.ProvisionResponse{}
	}
	return res, nil
}

func (r *runner) resolve(ctx context.Context, slice string) (*sdk.ResolveResponse, error) {
	ctx, cancel := r.call(ctx)
	defer cancel()
	got, err := client.Resolve(ctx, r.bin, &sdk.ResolveRequest{Header: r.header(), Target: r.target(slice)})
	if err != nil {
		return nil, err
	}
	if got.Address == "" {
		return nil, errors.New("resolve replied an empty address")
	}
	for k := range got.Values {
		if k == "" {
			return nil, errors.New("resolve replied a value with an empty key")
		}
		if passwordKey(k) && !slices.Contains(got.Secret, k) {
			return nil, fmt.Errorf("resolve replied the value %q but did not list it in secret; a password value must be listed so the host masks it", k)
		}
	}
	for _, k := range got.Secret {
		if _, ok := got.Values[k]; !ok {
			return nil, fmt.Errorf("resolve lists %q in secret but replied no such value", k)
		}
	}
	return got, nil
}

// passwordKey reports whether a value key names a password (password,
// admin_password, db_passwd…): such a value must be listed in secret.
func passwordKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "password") || strings.Contains(k, "passwd")
}

// checkResolve: a non-empty address, the same both times.
func (r *runner) checkResolve(ctx context.Context) (string, error) {
	a, err := r.resolve(ctx, r.slice)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", r.slice, err)
	}
	b, err := r.resolve(ctx, r.slice)
	if err != nil {
		return "", fmt.Errorf("resolve %s again: %w", r.slice, err)
	}
	if a.Address != b.Address {
		return "", fmt.Errorf("resolve %s twice gave %s, then %s; want the same address", r.slice, redact(a.Address), redact(b.Address))
	}
	return "address " + redact(a.Address), nil
}

// checkClone: works when describe says clone:true; replies unsupported
// when it says false.
func (r *runner) checkClone(ctx context.Context) (string, error) {
	target := r.slice + "_clone"
	cctx, cancel := r.call(ctx)
	r.made[target] = true
	_, err := client.Clone(cctx, r.bin, &sdk.CloneRequest{Header: r.header(), Target: r.target(target), Source: r.slice})
	cancel()
	if !r.desc.Clone {
		if err == nil {
			return "", errors.New("describe says clone:false, but clone succeeded")
		}
		if code := sdk.CodeOf(err); code != sdk.CodeUnsupported {
			return "", fmt.Errorf("describe says clone:false; want code %q, got %q: %w", sdk.CodeUnsupported, code, err)
		}
		return "replies unsupported, as describe says clone:false", nil
	}
	if err != nil && sdk.CodeOf(err) == sdk.CodeUnsupported {
		// clone:true says the adapter can clone where its server can; a
		// server that cannot (FerretDB for mongodb) answers unsupported,
		// and binky falls back to provision+migrate+seed.
		return "replies unsupported: this server cannot clone (binky falls back to provision, migrate and seed)", nil
	}
	if err != nil {
		return "", fmt.Errorf("clone %s to %s: %w", r.slice, target, err)
	}
	if _, err := r.resolve(ctx, target); err != nil {
		return "", fmt.Errorf("resolve the clone %s: %w", target, err)
	}
	if _, err := r.resolve(ctx, r.slice); err != nil {
		return "", fmt.Errorf("resolve the source %s after cloning it: %w", r.slice, err)
	}
	return "cloned " + r.slice + " to " + target + "; both resolve", nil
}

// checkSize: the optional size call. With size:true in describe, a
// provisioned slice has a size (not negative, shared bytes within it) and
// a slice never made is 0 bytes, not an error; without it, size replies
// unsupported (or invalid, from an adapter built before the call).
func (r *runner) checkSize(ctx context.Context) (string, error) {
	size := func(slice string) (*sdk.SizeResponse, error) {
		cctx, cancel := r.call(ctx)
		defer cancel()
		return client.Size(cctx, r.bin, &sdk.SizeRequest{Header: r.header(), Target: r.target(slice)})
	}
	got, err := size(r.slice)
	if !r.desc.Size {
		if err == nil {
			return "", errors.New("describe does not say size:true, but size succeeded")
		}
		if code := sdk.CodeOf(err); code != sdk.CodeUnsupported && code != sdk.CodeInvalid {
			return "", fmt.Errorf("describe does not say size:true; want code %q, got %q: %w", sdk.CodeUnsupported, code, err)
		}
		return "no size call (optional)", nil
	}
	if err != nil {
		return "", fmt.Errorf("size of %s: %w", r.slice, err)
	}
	if got.Bytes < 0 || got.Shared < 0 || got.Shared > got.Bytes {
		return "", fmt.Errorf("size of %s: %d bytes, %d shared; want 0 <= shared <= bytes", r.slice, got.Bytes, got.Shared)
	}
	none, err := size(r.slice + "_never")
	if err != nil {
		return "", fmt.Errorf("size of %s_never, a slice never made: %w; want 0 bytes", r.slice, err)
	}
	if none.Bytes != 0 {
		return "", fmt.Errorf("size of %s_never, a slice never made: %d bytes; want 0", r.slice, none.Bytes)
	}
	return fmt.Sprintf("%s is %d bytes; a slice never made is 0", r.slice, got.Bytes), nil
}

// checkDestroy: destroying every slice made so far twice succeeds.
func (r *runner) checkDestroy(ctx context.Context) (string, error) {
	var done []string
	for _, s := range []string{r.slice + "_clone", r.slice} {
		if !r.made[s] {
			continue
		}
		for i := range 2 {
			cctx, cancel := r.call(ctx)
			_, err := client.Destroy(cctx, r.bin, &sdk.DestroyRequest{Header: r.header(), Target: r.target(s)})
			cancel()
			if err != nil {
				return "", fmt.Errorf("destroy %s (attempt %d of 2): %w", s, i+1, err)
			}
		}
		delete(r.made, s)
		done = append(done, s)
	}
	return "destroyed twice: " + strings.Join(done, ", "), nil
}

// malformed are requests every adapter must refuse with code invalid.
func (r *runner) malformed() []struct{ what, body string } {
	noSlice, _ := json.Marshal(map[string]any{"protocol": sdk.Protocol, "adapter": r.adapter, "config": map[string]any{}})
	return []struct{ what, body string }{
		{"a body that is not JSON", "this is not json"},
		{"a request without a slice", string(noSlice)},
	}
}

// checkInvalid: malformed requests get ok:false, code invalid.
func (r *runner) checkInvalid(ctx context.Context) (string, error) {
	for _, m := range r.malformed() {
		if err := r.wantInvalid(ctx, m.body, m.what); err != nil {
			return "", err
		}
	}
	return "refuses a non-JSON body and a request without a slice", nil
}

func (r *runner) wantInvalid(ctx context.Context, body, what string) error {
	cctx, cancel := r.call(ctx)
	defer cancel()
	reply, err := r.bin.CallRaw(cctx, sdk.CallProvision, []byte(body))
	if err != nil {
		return fmt.Errorf("provision with %s: %w", what, err)
	}
	err = sdk.DecodeReply(reply, nil)
	if err == nil {
		return fmt.Errorf("provision with %s: replied ok; want ok:false, code %q", what, sdk.CodeInvalid)
	}
	if code := sdk.CodeOf(err); code != sdk.CodeInvalid {
		return fmt.Errorf("provision with %s: code %q; want %q (%v)", what, code, sdk.CodeInvalid, err)
	}
	return nil
}

// newerProtocol is a request from a host far newer than any adapter.
func (r *runner) newerProtocol() (int, []byte) {
	v := sdk.Protocol + 1000
	b, _ := json.Marshal(map[string]any{"protocol": v, "adapter": r.adapter, "slice": r.slice + "_future"})
	return v, b
}

// checkProtocol: a newer protocol is refused, naming both versions.
func (r *runner) checkProtocol(ctx context.Context) (string, error) {
	v, body := r.newerProtocol()
	r.made[r.slice+"_future"] = true
	cctx, cancel := r.call(ctx)
	defer cancel()
	reply, err := r.bin.CallRaw(cctx, sdk.CallProvision, body)
	if err != nil {
		return "", fmt.Errorf("provision with protocol %d: %w", v, err)
	}
	err = sdk.DecodeReply(reply, nil)
	if err == nil {
		return "", fmt.Errorf("provision with protocol %d: replied ok; want it refused with code %q", v, sdk.CodeInvalid)
	}
	if code := sdk.CodeOf(err); code != sdk.CodeInvalid {
		return "", fmt.Errorf("provision with protocol %d: code %q; want %q (%v)", v, code, sdk.CodeInvalid, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, strconv.Itoa(v)) || !strings.Contains(msg, strconv.Itoa(r.desc.Protocol)) {
		return "", fmt.Errorf("provision with protocol %d: refused with %q; want the message to name both %d and %d", v, msg, v, r.desc.Protocol)
	}
	return fmt.Sprintf("refuses protocol %d", v), nil
}

// checkRPC: when describe says rpc:true, the same requests give the same
// reply bytes over both tiers.
func (r *runner) checkRPC(ctx context.Context) (string, error) {
	if !r.desc.RPC {
		return "not offered (describe says rpc:false)", nil
	}
	sctx, cancel := r.call(ctx)
	sess, err := r.bin.StartRPC(sctx)
	cancel()
	if err != nil {
		return "", fmt.Errorf("describe says rpc:true: %w", err)
	}
	defer sess.Close()
	slice := r.slice + "_rpc"
	r.made[slice] = true
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	t := r.target(slice)
	seq := []struct{ call, body string }{
		{sdk.CallDescribe, enc(sdk.DescribeRequest{Header: r.header()})},
		{sdk.CallProvision, enc(sdk.ProvisionRequest{Header: r.header(), Target: t})},
		{sdk.CallResolve, enc(sdk.ResolveRequest{Header: r.header(), Target: t})},
	}
	if !r.desc.Clone {
		r.made[slice+"_c"] = true
		seq = append(seq, struct{ call, body string }{sdk.CallClone, enc(sdk.CloneRequest{Header: r.header(), Target: r.target(slice + "_c"), Source: slice})})
	}
	for _, m := range r.malformed() {
		seq = append(seq, struct{ call, body string }{sdk.CallProvision, m.body})
	}
	_, newer := r.newerProtocol()
	seq = append(seq,
		struct{ call, body string }{sdk.CallProvision, string(newer)},
		struct{ call, body string }{sdk.CallDestroy, enc(sdk.DestroyRequest{Header: r.header(), Target: t})},
	)
	// Each request goes over one-shot, then over RPC: the second provision
	// finds the slice made and the second destroy finds it gone, both ok.
	for _, s := range seq {
		one, err := r.raw(ctx, r.bin, s.call, s.body)
		if err != nil {
			return "", fmt.Errorf("one-shot %s: %w", s.call, err)
		}
		two, err := r.raw(ctx, sess, s.call, s.body)
		if err != nil {
			return "", fmt.Errorf("rpc %s: %w", s.call, err)
		}
		if s.call == sdk.CallProvision {
			// The second provision finds the slice the first made: only
			// existed may differ.
			one, two = withoutExisted(one), withoutExisted(two)
		}
		if !bytes.Equal(one, two) {
			return "", fmt.Errorf("%s %s: one-shot replied %s; rpc replied %s; want the same bytes",
				s.call, client.Snippet([]byte(s.body)), client.Snippet(one), client.Snippet(two))
		}
	}
	delete(r.made, slice)
	return fmt.Sprintf("%d requests, same replies over both tiers", len(seq)), nil
}

// withoutExisted is a provision reply without its existed field, or the
// reply as it is when it is not a JSON object.
func withoutExisted(reply []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(reply, &m) != nil {
		return reply
	}
	if _, ok := m["existed"]; !ok {
		return reply
	}
	delete(m, "existed")
	b, err := json.Marshal(m)
	if err != nil {
		return reply
	}
	return b
}

func (r *runner) raw(ctx context.Context, c client.Caller, call, body string) ([]byte, error) {
	ctx, cancel := r.call(ctx)
	defer cancel()
	return c.CallRaw(ctx, call, []byte(body))
}

// redact hides a password in an address before it is printed.
func redact(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.User == nil {
		return addr
	}
	return u.Redacted()
}

func orMissing(v string) string {
	if v == "" {
		return "nothing"
	}
	return v
}

// validName is the shape of adapter names and aliases.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}
