// Package jsontree reads JSON into a tree that keeps object key order and
// refuses duplicate keys, so that validators can walk user input, report every
// problem with its JSON path, and never silently drop a value that
// encoding/json would overwrite.
package jsontree

import (
	"bytes"
	"dagger/lowcode-pipeline/internal/fielderr"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Object is a JSON object with its keys in document order.
type Object struct {
	Keys   []string
	Fields map[string]any
}

// MaxDepth bounds nesting: configuration files are shallow, and a bound
// keeps hostile input from costing time or stack.
const MaxDepth = 1000

// Parse reads exactly one JSON value. Values are *Object, []any, string,
// json.Number, bool or nil.
func Parse(data []byte) (any, error) {
	data = StripBOM(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec, data: data}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return v, nil
}

// parser keeps the path to the current value as segments, and joins them
// only for an error message, so deep input costs linear time.
type parser struct {
	dec  *json.Decoder
	data []byte
	path []segment
}

// segment is an object's key, or an array's index when index >= 0.
type segment struct {
	key   string
	index int
}

// where is the path as fielderr writes it, cut to fielderr.MaxPath.
func (p *parser) where() string {
	path := ""
	for _, seg := range p.path {
		if seg.index >= 0 {
			path = fielderr.Index(path, seg.index)
		} else {
			path = fielderr.Join(path, seg.key)
		}
		if len(path) > fielderr.MaxPath {
			break // deep input: the start says where
		}
	}
	return fielderr.Cut(path, fielderr.MaxPath)
}

// token reads the next token; a string must be the text its bytes say.
func (p *parser) token() (json.Token, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if _, ok := tok.(string); ok {
		// the span holds the string's quotes, with any space, comma or colon before
		if problem := textProblem(p.data[start:p.dec.InputOffset()]); problem != "" {
			return nil, fielderr.Error{Path: p.where(), Message: problem}
		}
	}
	return tok, nil
}

func (p *parser) value() (any, error) {
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if len(p.path) >= MaxDepth {
			return nil, fmt.Errorf("invalid JSON: nested deeper than %d levels at byte %d", MaxDepth, p.dec.InputOffset())
		}
		switch t {
		case '{':
			return p.object()
		case '[':
			return p.array()
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %q at byte %d", t, p.dec.InputOffset())
	default:
		return t, nil
	}
}

func (p *parser) object() (any, error) {
	obj := &Object{Fields: map[string]any{}}
	for p.dec.More() {
		tok, err := p.token() // a key's problem is its object's
		if err != nil {
			return nil, err
		}
		key := tok.(string) // the decoder only yields string keys inside objects
		p.path = append(p.path, segment{key: key, index: -1})
		if _, dup := obj.Fields[key]; dup {
			return nil, fmt.Errorf("%s: duplicate key %s (a second value would silently replace the first)", p.where(), fielderr.Quote(key))
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		obj.Keys = append(obj.Keys, key)
		obj.Fields[key] = v
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntaxError(err)
	}
	return obj, nil
}

func (p *parser) array() (any, error) {
	arr := []any{}
	for p.dec.More() {
		p.path = append(p.path, segment{index: len(arr)})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		arr = append(arr, v)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntaxError(err)
	}
	return arr, nil
}

// textProblem says why the JSON string in raw would not read as the text it
// was sent as, or "" when it would: encoding/json reads a byte that is not
// UTF-8, and an escaped half of a UTF-16 pair, as U+FFFD, so what a check
// would see differs from what the receiver gets.
func textProblem(raw []byte) string {
	raw = raw[bytes.IndexByte(raw, '"'):]
	if !utf8.Valid(raw) {
		bad := 0
		for {
			r, n := utf8.DecodeRune(raw[bad:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			bad += n
		}
		return fmt.Sprintf("not valid UTF-8: byte 0x%02x in %s; JSON text is UTF-8, and a reader takes the byte for U+FFFD, so what is checked is not what is sent: write the text in UTF-8",
			raw[bad], fielderr.Quote(string(raw[1:len(raw)-1])))
	}
	if half := loneSurrogate(raw); half != "" {
		return fmt.Sprintf(`%s in %s is half of a UTF-16 surrogate pair, alone: JSON readers differ on it (Go's reads U+FFFD, JavaScript's keeps it); write the character itself`,
			half, fielderr.Quote(string(raw[1:len(raw)-1])))
	}
	return ""
}

// loneSurrogate is the first \uD800-\uDFFF escape of a JSON string that is
// not half of a pair, or "".
func loneSurrogate(raw []byte) string {
	unit := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		u, ok := unit(i)
		switch {
		case !ok:
			i++ // another escape: \\, \" …
		case utf16.IsSurrogate(u):
			if next, ok := unit(i + 6); ok && u < 0xDC00 && next >= 0xDC00 && next <= 0xDFFF {
				i += 11
				continue
			}
			return string(raw[i : i+6])
		default:
			i += 5
		}
	}
	return ""
}

// syntaxError says where the JSON breaks. A character outside ASCII where
// JSON takes its syntax (a no-break space or a curly quote pasted from a web
// page, a UTF-16 file's bytes) is named by its code point: encoding/json
// names the first byte of it as a Latin-1 letter the file does not hold.
func (p *parser) syntaxError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	var serr *json.SyntaxError
	// the decoder stands at the character it refused (its Offset is where
	// the token before ended)
	if at := p.dec.InputOffset(); errors.As(err, &serr) && at < int64(len(p.data)) && p.data[at] >= utf8.RuneSelf {
		r, size := utf8.DecodeRune(p.data[at:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Errorf("invalid JSON at byte %d: the byte 0x%02x is not UTF-8: save the file as UTF-8", at, p.data[at])
		}
		return fmt.Errorf("invalid JSON at byte %d: U+%04X %s stands where JSON takes its own syntax, in which only ASCII spaces, tabs and line breaks separate values: replace it (pasted from a web page or a word processor?)",
			at, r, strconv.QuoteRune(r))
	}
	return fmt.Errorf("invalid JSON near byte %d: %w", p.dec.InputOffset(), err)
}

// TypeName names a tree value's JSON type for error messages.
func TypeName(v any) string {
	switch v.(type) {
	case *Object:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// bom is the UTF-8 byte-order mark some Windows editors write first.
var bom = []byte{0xEF, 0xBB, 0xBF}

// StripBOM drops a leading UTF-8 byte-order mark: it is not JSON, but
// editors write it, and it carries nothing.
func StripBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }
