package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// Reply is the envelope of every answer on the wire: {"ok":true,…fields of
// the call's response} or {"ok":false,"error":"…","code":"…"}.
type Reply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Code  Code   `json:"code,omitempty"`
}

// Dispatch decodes one request for call from body, runs it against a and
// returns the encoded reply, never more than one JSON object. It recovers a
// panic inside the adapter into a CodeInternal reply. Both tiers use it, so a
// call answers the same over one-shot JSON and over RPC.
func Dispatch(ctx context.Context, a Adapter, call string, body []byte) (reply []byte) {
	defer func() {
		if r := recover(); r != nil {
			reply = EncodeError(Errorf(CodeInternal, "adapter panicked during %s: %v\n%s", call, r, firstLines(debug.Stack(), 12)))
		}
	}()
	resp, err := dispatch(ctx, a, call, body)
	if err != nil {
		return EncodeError(err)
	}
	return encodeOK(resp)
}

func dispatch(ctx context.Context, a Adapter, call string, body []byte) (any, error) {
	if len(body) > MaxMessage {
		return nil, Errorf(CodeInvalid, "request is %d bytes; the limit is %d", len(body), MaxMessage)
	}
	switch call {
	case CallDescribe:
		var req DescribeRequest
		if err := decodeRequest(body, &req, &req.Header, false); err != nil {
			return nil, err
		}
		resp, err := a.Describe(ctx, &req)
		if err == nil && resp != nil && resp.Protocol == 0 {
			resp.Protocol = Protocol
		}
		if _, ok := a.(Sizer); ok && err == nil && resp != nil {
			resp.Size = true
		}
		return resp, err
	case CallProvision:
		var req ProvisionRequest
		if err := decodeTarget(body, &req, &req.Header, &req.Target); err != nil {
			return nil, err
		}
		return a.Provision(ctx, &req)
	case CallResolve:
		var req ResolveRequest
		if err := decodeTarget(body, &req, &req.Header, &req.Target); err != nil {
			return nil, err
		}
		return a.Resolve(ctx, &req)
	case CallClone:
		var req CloneRequest
		if err := decodeTarget(body, &req, &req.Header, &req.Target); err != nil {
			return nil, err
		}
		if req.Source == "" {
			return nil, Errorf(CodeInvalid, "clone request has no source slice")
		}
		return a.Clone(ctx, &req)
	case CallDestroy:
		var req DestroyRequest
		if err := decodeTarget(body, &req, &req.Header, &req.Target); err != nil {
			return nil, err
		}
		return a.Destroy(ctx, &req)
	case CallSize:
		var req SizeRequest
		if err := decodeTarget(body, &req, &req.Header, &req.Target); err != nil {
			return nil, err
		}
		sz, ok := a.(Sizer)
		if !ok {
			return nil, Errorf(CodeUnsupported, "this adapter does not tell a slice's size")
		}
		return sz.Size(ctx, &req)
	}
	return nil, Errorf(CodeInvalid, "unknown call %q (want one of describe, provision, resolve, clone, destroy, size)", call)
}

func decodeTarget(body []byte, req any, h *Header, t *Target) error {
	if err := decodeRequest(body, req, h, true); err != nil {
		return err
	}
	if t.Slice == "" {
		return Errorf(CodeInvalid, "request has no slice")
	}
	return nil
}

// decodeRequest reads exactly one JSON object into req and checks its
// protocol version.
func decodeRequest(body []byte, req any, h *Header, needProtocol bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(req); err != nil {
		return Errorf(CodeInvalid, "request is not a JSON object: %v", err)
	}
	if dec.More() {
		return Errorf(CodeInvalid, "request holds more than one JSON value")
	}
	if h.Protocol > Protocol {
		return Errorf(CodeInvalid, "request speaks protocol %d; this adapter knows protocol %d", h.Protocol, Protocol)
	}
	if needProtocol && h.Protocol < 1 {
		return Errorf(CodeInvalid, "request has no protocol version (this adapter speaks protocol %d)", Protocol)
	}
	return nil
}

// EncodeError encodes err as an ok:false reply.
func EncodeError(err error) []byte {
	msg := err.Error()
	if e, ok := err.(*Error); ok {
		msg = e.Message
	}
	b, _ := json.Marshal(Reply{OK: false, Error: msg, Code: CodeOf(err)})
	return b
}

// encodeOK merges {"ok":true} with the response's own fields.
func encodeOK(resp any) []byte {
	fields := map[string]json.RawMessage{}
	if resp != nil {
		b, err := json.Marshal(resp)
		if err != nil {
			return EncodeError(Errorf(CodeInternal, "encode reply: %v", err))
		}
		if string(b) != "null" {
			if err := json.Unmarshal(b, &fields); err != nil {
				return EncodeError(Errorf(CodeInternal, "reply is not a JSON object: %v", err))
			}
		}
	}
	fields["ok"] = json.RawMessage("true")
	delete(fields, "error")
	delete(fields, "code")
	b, err := json.Marshal(fields)
	if err != nil {
		return EncodeError(Errorf(CodeInternal, "encode reply: %v", err))
	}
	return b
}

// DecodeReply parses one reply: on ok it decodes the fields into resp (which
// may be nil); on ok:false it returns an *Error carrying the code.
func DecodeReply(b []byte, resp any) error {
	var r Reply
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("reply is not a JSON object: %w", err)
	}
	if !r.OK {
		code := r.Code
		if !code.Valid() {
			code = CodeInternal
		}
		msg := r.Error
		if msg == "" {
			msg = "adapter replied ok:false with no error message"
		}
		return &Error{Code: code, Message: msg}
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(b, resp); err != nil {
		return fmt.Errorf("decode reply fields: %w", err)
	}
	return nil
}

func firstLines(b []byte, n int) []byte {
	for i, c := range b {
		if c == '\n' {
			n--
			if n == 0 {
				return b[:i]
			}
		}
	}
	return b
}
