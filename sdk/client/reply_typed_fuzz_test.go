package client

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/binkyhq/binky/sdk"
)

// replayCaller is a Caller whose adapter prints reply, whatever the call.
// Both tiers end their CallRaw the same way — the bytes the adapter sent
// (stdout in the one-shot tier, the RPC reply in a session) go through
// CheckReply — so the typed decoding below is what either tier does with
// a hostile adapter's reply.
type replayCaller struct{ reply []byte }

func (r replayCaller) Label() string { return "binky-adapter-fuzz" }

func (r replayCaller) CallRaw(_ context.Context, _ string, _ []byte) ([]byte, error) {
	return CheckReply(r.reply)
}

// FuzzTypedReplies: whatever an adapter replies, every verb's typed call
// returns either a response or an error, never both and never neither,
// never panics, and a well-formed ok:false reply is an *sdk.Error.
func FuzzTypedReplies(f *testing.F) {
	f.Add([]byte(`{"ok":true,"protocol":1,"name":"x","services":["postgres"]}`))
	f.Add([]byte(`{"ok":true,"address":"postgres://u:p@127.0.0.1:5432/db","existed":true}`))
	f.Add([]byte(`{"ok":true,"env":{"A":"b"},"address":"redis://127.0.0.1/0"}`))
	f.Add([]byte(`{"ok":false,"error":"no","code":"auth"}`))
	f.Add([]byte(`{"ok":false}`))
	f.Add([]byte(`{"ok":true,"address":7,"existed":"yes"}`))
	f.Add([]byte(`{"ok":true,"env":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		c := replayCaller{b}
		check := func(verb string, resp any, isNil bool, err error) {
			t.Helper()
			if err == nil && isNil {
				t.Fatalf("%s of %q: no response and no error", verb, b)
			}
			if err != nil && !isNil {
				t.Fatalf("%s of %q: a response %+v and an error %v", verb, b, resp, err)
			}
			if err != nil && !replyOK(b) {
				if got, cerr := CheckReply(b); cerr == nil && json.Unmarshal(got, &sdk.Reply{}) == nil {
					var se *sdk.Error
					if !errors.As(err, &se) {
						t.Fatalf("%s of ok:false reply %q: error %v is not an *sdk.Error", verb, b, err)
					}
				}
			}
		}
		d, err := Describe(ctx, c, nil)
		check("describe", d, d == nil, err)
		p, err := Provision(ctx, c, &sdk.ProvisionRequest{})
		check("provision", p, p == nil, err)
		r, err := Resolve(ctx, c, &sdk.ResolveRequest{})
		check("resolve", r, r == nil, err)
		cl, err := Clone(ctx, c, &sdk.CloneRequest{})
		check("clone", cl, cl == nil, err)
		de, err := Destroy(ctx, c, &sdk.DestroyRequest{})
		check("destroy", de, de == nil, err)
	})
}
