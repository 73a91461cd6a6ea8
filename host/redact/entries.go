package redact

import "io"

// Entries returns a writer that redacts each Write whole (Bytes) before
// passing it to w: for a log whose every entry is one Write (hclog's), so
// nothing is held back across writes, as Writer does for a stream.
func (r *Redactor) Entries(w io.Writer) io.Writer { return entries{r, w} }

// entries is the writer Entries returns.
type entries struct {
	r *Redactor
	w io.Writer
}

func (o entries) Write(p []byte) (int, error) {
	if _, err := o.w.Write(o.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
