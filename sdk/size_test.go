package sdk

import (
	"context"
	"encoding/json"
	"testing"
)

// sizedAdapter is fakeAdapter with the optional size call.
type sizedAdapter struct{ fakeAdapter }

func (sizedAdapter) Size(_ context.Context, req *SizeRequest) (*SizeResponse, error) {
	return &SizeResponse{Bytes: int64(len(req.Slice)), Shared: 1, Note: "test"}, nil
}

// TestSizeIsOptional: an adapter without Sizer answers size with code
// unsupported and describes itself without size; one with Sizer is
// described with size and its reply carries its fields.
func TestSizeIsOptional(t *testing.T) {
	ctx := context.Background()
	req := []byte(`{"protocol":1,"slice":"abcd"}`)
	for _, tc := range []struct {
		name     string
		a        Adapter
		wantSize bool
		wantCode Code
		wantB    int64
	}{
		{"without", fakeAdapter{}, false, CodeUnsupported, 0},
		{"with", sizedAdapter{}, true, "", 4},
		// What Run serves: the wrapping that adds rpc:true keeps size.
		{"without, as Run serves it", withRPC(fakeAdapter{}), false, CodeUnsupported, 0},
		{"with, as Run serves it", withRPC(sizedAdapter{}), true, "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d DescribeResponse
			if err := DecodeReply(Dispatch(ctx, tc.a, CallDescribe, []byte(`{}`)), &d); err != nil {
				t.Fatal(err)
			}
			if d.Size != tc.wantSize {
				t.Errorf("describe size = %v; want %v", d.Size, tc.wantSize)
			}
			var s SizeResponse
			err := DecodeReply(Dispatch(ctx, tc.a, CallSize, req), &s)
			if tc.wantCode != "" {
				if CodeOf(err) != tc.wantCode {
					t.Errorf("size error = %v; want code %s", err, tc.wantCode)
				}
				return
			}
			if err != nil || s.Bytes != tc.wantB || s.Shared != 1 {
				t.Errorf("size = %+v, %v; want %d bytes, 1 shared", s, err, tc.wantB)
			}
		})
	}
	b, _ := json.Marshal(&SizeResponse{Bytes: 3})
	if got, want := string(b), `{"bytes":3}`; got != want {
		t.Errorf("json = %s; want %s", got, want)
	}
}
