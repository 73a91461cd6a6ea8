package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzOnlyResult: a line Call decodes in one pass (onlyResult, then the
// value straight into the result) is one the two-pass way — a Frame, then
// its result — takes for a result frame, with the same result.
func FuzzOnlyResult(f *testing.F) {
	f.Add([]byte(`{"result":{"worlds":[{"project":"p","worktree":"w","state":"up","services":[{"name":"web","pid":3}]}]}}`))
	f.Add([]byte(`{"result":null}`))
	f.Add([]byte(`{"result":{"worlds":[]},"error":{"code":"x","message":"y"}}`))
	f.Add([]byte(`{"result":{},"result":{"worlds":[{"project":"p"}]}}`))
	f.Add([]byte(`{"result":{"worlds":7}}`))
	f.Add([]byte(`{"progress":{"step":"s"},"result":{}}`))
	f.Add([]byte(`{"result":{"env":{"a":"b"}},"progress":{"step":"s"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		v, ok := onlyResult(line)
		if !ok {
			return
		}
		for _, mk := range []func() any{func() any { return &StatusResult{} }, func() any { return &EnvResult{} }} {
			fast := mk()
			if json.Unmarshal(v, fast) != nil {
				continue // Call decodes it the two-pass way
			}
			var fr Frame
			if err := json.Unmarshal(line, &fr); err != nil {
				t.Fatalf("%q decodes in one pass into %T but is no frame: %v", line, fast, err)
			}
			if fr.Progress != nil || fr.Output != nil || fr.Error != nil {
				t.Fatalf("%q decodes in one pass into %T but is not a result frame: %+v", line, fast, fr)
			}
			slow := mk()
			if len(fr.Result) > 0 {
				if err := json.Unmarshal(fr.Result, slow); err != nil {
					t.Fatalf("%q: its result decodes into %T in one pass, not in two: %v", line, slow, err)
				}
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: one pass %+v; two %+v", line, fast, slow)
			}
		}
	})
}

// FuzzRequestLine: the request line Call writes is json.Marshal's.
func FuzzRequestLine(f *testing.F) {
	f.Add("status", "PATH", "/usr/bin:/bin", "a<b>&c\u2028", true)
	f.Add("env", "\xff", "\x00\"\\", "", false)
	f.Fuzz(func(t *testing.T, op, k, v, name string, here bool) {
		for _, args := range []any{nil, StatusArgs{WorldRef: WorldRef{Name: name, Env: map[string]string{k: v, "HOME": "/h"}}, Here: here}, (*EnvArgs)(nil)} {
			var b []byte
			if args != nil {
				var err error
				if b, err = json.Marshal(args); err != nil {
					t.Fatal(err)
				}
			}
			want, _ := json.Marshal(Request{Op: op, Args: b})
			if got := requestLine(op, b); string(got) != string(want) {
				t.Fatalf("requestLine(%q, %s) = %s; json.Marshal gives %s", op, b, got, want)
			}
		}
	})
}
