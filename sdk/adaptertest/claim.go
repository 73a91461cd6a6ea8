package adaptertest

import (
	"context"

	"fmt"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// checkClaim: an adapter that says claims:true records the owner of each
// slice it makes and refuses every verb of another owner on it, with code
// conflict, leaving the slice whole; it adopts a slice made without an
// owner (what an older host left). claims:false is reported, not failed.
func (r *runner) checkClaim(ctx context.Context) (string, error) {
	if !r.desc.Claims {
		return "describe says claims:false: this adapter does not record who owns a slice, so two binky homes on one machine can reach each other's slices of the same name", nil
	}
	mine := r.target(r.slice + "_claim")
	theirs := mine
	theirs.Owner = r.opts.Owner + "-other"
	theirs.OwnerLabel = "another home of the conformance run"
	legacy := r.target(r.slice + "_legacy")
	legacy.Owner, legacy.OwnerLabel = "", ""

	do := func(call string, t sdk.Target) error {
		cctx, cancel := r.call(ctx)
		defer cancel()
		var err error
		switch call {
		case sdk.CallProvision:
			r.made[t.Slice] = true
			_, err = client.Provision(cctx, r.bin, &sdk.ProvisionRequest{Header: r.header(), Target: t})
		case sdk.CallResolve:
			_, err = client.Resolve(cctx, r.bin, &sdk.ResolveRequest{Header: r.header(), Target: t})
		case sdk.CallClone:
			r.made[t.Slice] = true
			_, err = client.Clone(cctx, r.bin, &sdk.CloneRequest{Header: r.header(), Target: t, Source: mine.Slice})
		case sdk.CallDestroy:
			_, err = client.Destroy(cctx, r.bin, &sdk.DestroyRequest{Header: r.header(), Target: t})
		}
		return err
	}
	refused := func(call string, t sdk.Target) error {
		err := do(call, t)
		if err == nil {
			return fmt.Errorf("%s of slice %s by another owner succeeded; want code %q", call, t.Slice, sdk.CodeConflict)
		}
		if code := sdk.CodeOf(err); code != sdk.CodeConflict {
			return fmt.Errorf("%s of slice %s by another owner: want code %q, got %q: %w", call, t.Slice, sdk.CodeConflict, code, err)
		}
		return nil
	}

	if err := do(sdk.CallProvision, mine); err != nil {
		return "", fmt.Errorf("provision %s: %w", mine.Slice, err)
	}
	for _, call := range []string{sdk.CallProvision, sdk.CallResolve, sdk.CallDestroy} {
		if err := refused(call, theirs); err != nil {
			return "", err
		}
	}
	// The refused destroy left the slice whole: its owner still has it.
	if res, err := r.provisionReply(ctx, mine.Slice); err != nil {
		return "", fmt.Errorf("provision %s again by its owner after another owner was refused: %w", mine.Slice, err)
	} else if res.Existed != nil && !*res.Existed {
		return "", fmt.Errorf("slice %s was gone after another owner's destroy was refused", mine.Slice)
	}
	if _, err := r.resolve(ctx, mine.Slice); err != nil {
		return "", fmt.Errorf("resolve %s by its owner: %w", mine.Slice, err)
	}
	if r.desc.Clone {
		// Another owner may neither read the slice by cloning it nor clone
		// into a slice that is not its own.
		into := theirs
		into.Slice = r.slice + "_claimclone"
		err := do(sdk.CallClone, into)
		if err != nil && sdk.CodeOf(err) != sdk.CodeConflict && sdk.CodeOf(err) != sdk.CodeUnsupported {
			return "", fmt.Errorf("clone of %s (owned by another) into %s: want code %q, got %q: %w", mine.Slice, into.Slice, sdk.CodeConflict, sdk.CodeOf(err), err)
		}
		if err == nil {
			return "", fmt.Errorf("clone of slice %s by another owner succeeded; want code %q", mine.Slice, sdk.CodeConflict)
		}
	}

	// A slice made with no owner is adopted by the first owner that
	// provisions it, and then refused to everybody else.
	if err := do(sdk.CallProvision, legacy); err != nil {
		return "", fmt.Errorf("provision %s without an owner: %w", legacy.Slice, err)
	}
	adopt := legacy
	adopt.Owner, adopt.OwnerLabel = mine.Owner, mine.OwnerLabel
	if err := do(sdk.CallProvision, adopt); err != nil {
		return "", fmt.Errorf("adopt the unclaimed slice %s: %w", legacy.Slice, err)
	}
	other := adopt
	other.Owner, other.OwnerLabel = theirs.Owner, theirs.OwnerLabel
	if err := refused(sdk.CallProvision, other); err != nil {
		return "", fmt.Errorf("after adoption: %w", err)
	}

	for _, t := range []sdk.Target{mine, adopt} {
		if err := do(sdk.CallDestroy, t); err != nil {
			return "", fmt.Errorf("destroy %s by its owner: %w", t.Slice, err)
		}
		delete(r.made, t.Slice)
	}
	return "another owner's provision, resolve and destroy refused with conflict; an unclaimed slice adopted", nil
}
