package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/binkyhq/binky/sdk"
)

// Caller is what both tiers offer: a *Binary (one process per call) and a
// *Session (one go-plugin process for a batch).
type Caller interface {
	// Label names the adapter in errors.
	Label() string
	// CallRaw sends one JSON request and returns the one JSON reply,
	// whether it says ok or not.
	CallRaw(ctx context.Context, call string, request []byte) ([]byte, error)
}

// callJSON encodes req, sends it and decodes the reply into resp.
func callJSON(ctx context.Context, c Caller, call string, req, resp any) error {
	body, err := encodeRequest(req)
	if err != nil {
		return fmt.Errorf("%s %s: encode request: %w", c.Label(), call, err)
	}
	reply, err := c.CallRaw(ctx, call, body)
	if err != nil {
		return err
	}
	if err := sdk.DecodeReply(reply, resp); err != nil {
		return fmt.Errorf("%s %s: %w", c.Label(), call, err)
	}
	return nil
}

func encodeRequest(req any) ([]byte, error) {
	switch r := req.(type) {
	case []byte:
		return r, nil
	case json.RawMessage:
		return r, nil
	case nil:
		return []byte("{}"), nil
	}
	return json.Marshal(req)
}

func header(h *sdk.Header) {
	if h.Protocol == 0 {
		h.Protocol = sdk.Protocol
	}
}

// Describe asks who the adapter is. A nil req sends an empty request with
// the current protocol; a zero Protocol is filled in.
func Describe(ctx context.Context, c Caller, req *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	if req == nil {
		req = &sdk.DescribeRequest{}
	}
	header(&req.Header)
	var resp sdk.DescribeResponse
	if err := callJSON(ctx, c, sdk.CallDescribe, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Provision asks for req.Slice to exist. A zero Protocol is filled in.
func Provision(ctx context.Context, c Caller, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	header(&req.Header)
	var resp sdk.ProvisionResponse
	if err := callJSON(ctx, c, sdk.CallProvision, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Resolve asks where req.Slice lives. A zero Protocol is filled in.
func Resolve(ctx context.Context, c Caller, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	header(&req.Header)
	var resp sdk.ResolveResponse
	if err := callJSON(ctx, c, sdk.CallResolve, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Clone asks for req.Slice to become a copy of req.Source. A zero Protocol
// is filled in.
func Clone(ctx context.Context, c Caller, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	header(&req.Header)
	var resp sdk.CloneResponse
	if err := callJSON(ctx, c, sdk.CallClone, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Destroy asks for req.Slice to be gone. A zero Protocol is filled in.
func Destroy(ctx context.Context, c Caller, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	header(&req.Header)
	var resp sdk.DestroyResponse
	if err := callJSON(ctx, c, sdk.CallDestroy, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Size asks how much req.Slice takes. A zero Protocol is filled in. An
// adapter without the call answers with code unsupported (or invalid,
// when it predates the call).
func Size(ctx context.Context, c Caller, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	header(&req.Header)
	var resp sdk.SizeResponse
	if err := callJSON(ctx, c, sdk.CallSize, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
