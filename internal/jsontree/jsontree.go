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
	dec := json.NewDecoder(bytes.NewReader(StripBOM(data)))
	dec.UseNumber()
	p := &parser{dec: dec}
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

func (p *parser) value() (any, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, syntaxError(p.dec, err)
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
		tok, err := p.dec.Token()
		if err != nil {
			return nil, syntaxError(p.dec, err)
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
		return nil, syntaxError(p.dec, err)
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
		return nil, syntaxError(p.dec, err)
	}
	return arr, nil
}

func syntaxError(dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON near byte %d: %w", dec.InputOffset(), err)
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
