package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SnippetLen is how many bytes of a malformed reply an error quotes.
const SnippetLen = 200

// CheckReply returns the one JSON object b holds (surrounding whitespace
// trimmed). It is an error when b is empty, is not JSON, holds anything
// but a single object, holds more than one value, exceeds sdk.MaxMessage, or
// has no boolean "ok" field. The error does not quote b; callers add a
// snippet (see Snippet).
func CheckReply(b []byte) ([]byte, error) {
	if len(b) > maxMessage {
		return nil, fmt.Errorf("reply is %d bytes; the limit is %d (1 MiB)", len(b), maxMessage)
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, errors.New("reply is empty")
	}
	if t[0] != '{' {
		return nil, errors.New("reply is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("reply is not valid JSON: %v", err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("reply holds more than one JSON value")
	}
	switch string(fields["ok"]) {
	case "true", "false":
	case "":
		return nil, errors.New(`reply has no "ok" field`)
	default:
		return nil, errors.New(`reply's "ok" field is not a boolean`)
	}
	return t[:end], nil
}

// replyOK reports whether a reply that passed CheckReply says ok:true.
func replyOK(reply []byte) bool {
	var r struct {
		OK bool `json:"ok"`
	}
	return json.Unmarshal(reply, &r) == nil && r.OK
}

// Snippet quotes the first SnippetLen bytes of b for an error message.
func Snippet(b []byte) string {
	if len(b) > SnippetLen {
		return fmt.Sprintf("%q…", b[:SnippetLen])
	}
	return fmt.Sprintf("%q", b)
}
