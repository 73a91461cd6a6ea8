package world

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/api"
)

// TestReadCallerAttach: lines a caller sends before a run attaches, and
// lines that are not Input, are dropped; after Attach the op gets them in
// order, and the caller's hang-up closes the channel and HungUp.
func TestReadCallerAttach(t *testing.T) {
	s := NewStream(&bytes.Buffer{}, nil)
	pr, pw := ioPipe()
	done := make(chan struct{})
	go func() { s.ReadCaller(pr); close(done) }()
	pw.Write([]byte(`{"data":"ZHJvcHBlZA=="}` + "\n")) // before Attach: dropped
	in, stop := s.Attach(api.Attach{})
	defer stop()
	pw.Write([]byte("not json\n" + `{"data":"aGk="}` + "\n" + `{"size":{"rows":3,"cols":4}}` + "\n" + `{"eof":true}` + "\n"))
	var got []string
	for len(got) < 3 {
		x := <-in
		switch {
		case len(x.Data) > 0:
			got = append(got, "data "+string(x.Data))
		case x.Size != nil:
			got = append(got, "size")
		case x.EOF:
			got = append(got, "eof")
		}
	}
	// "dropped" may have arrived after Attach (the reader runs on its own);
	// what matters is the order of the rest.
	if g := strings.Join(got, ","); g != "data hi,size,eof" && g != "data dropped,data hi,size" {
		t.Errorf("got %s; want data hi,size,eof", g)
	}
	pw.Close()
	<-done
	select {
	case <-s.HungUp():
	default:
		t.Error("the caller's hang-up did not close HungUp")
	}
}

func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"data":"aGk="}`))
	f.Add([]byte(`{"eof":true}`))
	f.Add([]byte(`{"size":{"rows":0,"cols":80}}`))
	f.Add([]byte(`{"data":"!!"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		in, ok := parseInput(line)
		if !ok {
			return
		}
		if len(in.Data) == 0 && !in.EOF && in.Size == nil {
			t.Fatalf("%q: ok for an empty input", line)
		}
		if in.Size != nil && (in.Size.Rows == 0 || in.Size.Cols == 0) {
			t.Fatalf("%q: a zero size passed", line)
		}
	})
}

func ioPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }

// TestWholeRunes: a character split between two writes reaches the
// writer whole.
func TestWholeRunes(t *testing.T) {
	var got []string
	w := &wholeRunes{w: writerFunc(func(p []byte) { got = append(got, string(p)) })}
	s := []byte("añb€")
	for i := range s {
		w.Write(s[i : i+1])
	}
	w.Write([]byte{0xe2})
	w.Flush()
	if strings.Join(got, "|") != "a|ñ|b|€|\xe2" {
		t.Errorf("got %q; want each character whole, then the held byte at Flush", got)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
