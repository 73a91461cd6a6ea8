package api

// The JSON reader under DecodeStatusTable (statustable.go): values as the
// daemon writes them, read in place, with anything else declined (errTable)
// for encoding/json to decode instead.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// errTable is DecodeStatusTable's answer to what it does not follow.
var errTable = errors.New("status table reply: not as the daemon writes it")

// maxDepth is encoding/json's bound on nesting, which skip keeps too.
const maxDepth = 10000

type tableDecoder struct {
	b     []byte
	i     int
	depth int // of the objects and arrays being read
}

func (d *tableDecoder) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errTable, what, d.i)
}

func (d *tableDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (d *tableDecoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// end checks that nothing but white space follows.
func (d *tableDecoder) end() error {
	if d.peek() != 0 || d.i < len(d.b) {
		return d.fail("text after the value")
	}
	return nil
}

// lit consumes the literal s (null, true, false) when it is next.
func (d *tableDecoder) lit(s string) bool {
	if d.peek() == s[0] && len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

func (d *tableDecoder) null() bool { return d.lit("null") }

// more reads what follows a member of an object or array: a comma (true:
// another member follows) or end (false, nil: the object or array is
// done); anything else is an error naming what came before, what.
func (d *tableDecoder) more(end byte, what string) (bool, error) {
	switch d.peek() {
	case ',':
		d.i++
		return true, nil
	case end:
		d.i++
		return false, nil
	}
	return false, d.fail("no comma or end after " + what)
}

// object reads an object, calling field with the index in keys of each
// key it knows; the values of other keys are skipped. A key given twice,
// or one of keys in another case, is an error (encoding/json would merge
// or match it).
func (d *tableDecoder) object(keys []string, field func(k int) error) error {
	if d.peek() != '{' {
		return d.fail("not an object")
	}
	d.i++
	d.depth++
	defer func() { d.depth-- }()
	var seen uint64
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.fail("no key")
		}
		key, err := d.rawKey()
		if err != nil {
			return err
		}
		if d.peek() != ':' {
			return d.fail("no colon after a key")
		}
		d.i++
		k := indexOf(keys, key)
		switch {
		case k >= 0:
			if seen&(1<<k) != 0 {
				return d.fail("a key given twice")
			}
			seen |= 1 << k
			if err := field(k); err != nil {
				return err
			}
		case foldsTo(keys, key):
			return d.fail("a key in another case")
		default:
			if err := d.skip(0); err != nil {
				return err
			}
		}
		if more, err := d.more('}', "a value"); !more {
			return err
		}
	}
}

func indexOf(keys []string, key []byte) int {
	for i, k := range keys {
		if k == string(key) {
			return i
		}
	}
	return -1
}

// foldsTo says whether key matches one of keys the way encoding/json
// matches names (case-insensitively; any byte past ASCII counts as a
// possible match, for its Unicode folding).
func foldsTo(keys []string, key []byte) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, k := range keys {
		if len(k) != len(key) {
			continue
		}
		same := true
		for i := range key {
			if lower(key[i]) != lower(k[i]) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// rawKey reads a key without escapes.
func (d *tableDecoder) rawKey() ([]byte, error) {
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j], nil
		case c == '\\' || c < 0x20:
			return nil, d.fail("a key with an escape")
		}
	}
	return nil, d.fail("an unterminated key")
}

// str reads a string; plain ASCII is taken as it is, anything else
// (escapes, UTF-8, which encoding/json repairs) is handed to
// encoding/json. null leaves s as it is.
func (d *tableDecoder) str(s *string) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return d.fail("not a string")
	}
	start := d.i
	for j := start + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			*s = string(d.b[start+1 : j])
			d.i = j + 1
			return nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			if err := d.skipString(); err != nil {
				return err
			}
			return json.Unmarshal(d.b[start:d.i], s)
		}
	}
	return d.fail("an unterminated string")
}

// number reads a number's text as JSON writes numbers.
func (d *tableDecoder) number() (string, error) {
	d.ws()
	start, j := d.i, d.i
	digits := func() int {
		n := 0
		for j < len(d.b) && '0' <= d.b[j] && d.b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	switch {
	case j < len(d.b) && d.b[j] == '0':
		j++
	case digits() == 0:
		return "", d.fail("not a number")
	}
	if j < len(d.b) && d.b[j] == '.' {
		j++
		if digits() == 0 {
			return "", d.fail("a number without digits after its point")
		}
	}
	if j < len(d.b) && (d.b[j] == 'e' || d.b[j] == 'E') {
		j++
		if j < len(d.b) && (d.b[j] == '+' || d.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return "", d.fail("a number without exponent digits")
		}
	}
	d.i = j
	return string(d.b[start:j]), nil
}

// int reads an integer; null leaves n as it is.
func (d *tableDecoder) int(n *int) error {
	if d.null() {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(s, 10, 0)
	if err != nil {
		return d.fail("not an int")
	}
	*n = int(v)
	return nil
}

// float reads a number; null leaves f as it is.
func (d *tableDecoder) float(f *float64) error {
	if d.null() {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return d.fail("not a float64")
	}
	*f = v
	return nil
}

// bool reads true or false; null leaves b as it is.
func (d *tableDecoder) bool(b *bool) error {
	switch {
	case d.null():
	case d.lit("true"):
		*b = true
	case d.lit("false"):
		*b = false
	default:
		return d.fail("not a bool")
	}
	return nil
}

// time reads a time as time.Time's UnmarshalJSON does; null leaves t as
// it is.
func (d *tableDecoder) time(t *time.Time) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return d.fail("a time that is not a string")
	}
	start := d.i
	if err := d.skipString(); err != nil {
		return err
	}
	return t.UnmarshalJSON(d.b[start:d.i])
}

// ptr reads null (the pointer stays nil) or, through obj, an object.
func (d *tableDecoder) ptr(obj func() error) error {
	if d.null() {
		return nil
	}
	return obj()
}

// array reads null (n is -1) or an array, calling elem for each element
// with its index; n is the number of elements.
func (d *tableDecoder) array(elem func(i int) error) (n int, err error) {
	if d.null() {
		return -1, nil
	}
	if d.peek() != '[' {
		return 0, d.fail("not an array")
	}
	d.i++
	d.depth++
	defer func() { d.depth-- }()
	if d.peek() == ']' {
		d.i++
		return 0, nil
	}
	for {
		if err := elem(n); err != nil {
			return n, err
		}
		n++
		if more, err := d.more(']', "an element"); !more {
			return n, err
		}
	}
}

func (d *tableDecoder) skip(depth int) error {
	if d.depth+depth >= maxDepth {
		return d.fail("nested too deep")
	}
	switch d.peek() {
	case '"':
		return d.skipString()
	case '{':
		d.i++
		if d.peek() == '}' {
			d.i++
			return nil
		}
		for {
			if d.peek() != '"' {
				return d.fail("no key")
			}
			if err := d.skipString(); err != nil {
				return err
			}
			if d.peek() != ':' {
				return d.fail("no colon after a key")
			}
			d.i++
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if more, err := d.more('}', "a value"); !more {
				return err
			}
		}
	case '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return nil
		}
		for {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			if more, err := d.more(']', "an element"); !more {
				return err
			}
		}
	case 't':
		if d.lit("true") {
			return nil
		}
	case 'f':
		if d.lit("false") {
			return nil
		}
	case 'n':
		if d.null() {
			return nil
		}
	default:
		_, err := d.number()
		return err
	}
	return d.fail("not a value")
}

// skipString reads a string (d.b[d.i] is its quote), checking its escapes.
func (d *tableDecoder) skipString() error {
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return nil
		case c < 0x20:
			return d.fail("a control character in a string")
		case c == '\\':
			j++
			if j >= len(d.b) {
				return d.fail("an unterminated string")
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.b) {
					return d.fail("an unterminated string")
				}
				for _, h := range d.b[j+1 : j+5] {
					if !isHex(h) {
						return d.fail("a bad \\u escape")
					}
				}
				j += 4
			default:
				return d.fail("a bad escape")
			}
		}
	}
	return d.fail("an unterminated string")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ResultDecoder is a call's result that decodes itself from the reply
// (Client.Call hands it the result's JSON) more cheaply than encoding/json
// would; when it fails, the result is decoded with encoding/json.
