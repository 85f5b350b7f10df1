// Package jsontree reads JSON into a tree that keeps object key order and
// refuses duplicate keys, so that validators can walk user input, report every
// problem with its JSON path, and never silently drop a value that
// encoding/json would overwrite.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Object is a JSON object with its keys in document order.
type Object struct {
	Keys   []string
	Fields map[string]any
}

// Parse reads exactly one JSON value. Values are *Object, []any, string,
// json.Number, bool or nil.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return v, nil
}

func parseValue(dec *json.Decoder, path string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(dec, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return parseObject(dec, path)
		case '[':
			return parseArray(dec, path)
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %q at byte %d", t, dec.InputOffset())
	default:
		return t, nil
	}
}

func parseObject(dec *json.Decoder, path string) (any, error) {
	obj := &Object{Fields: map[string]any{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(dec, err)
		}
		key := tok.(string) // the decoder only yields string keys inside objects
		child := fielderr.Join(path, key)
		if _, dup := obj.Fields[key]; dup {
			return nil, fmt.Errorf("%s: duplicate key %q (a second value would silently replace the first)", child, key)
		}
		v, err := parseValue(dec, child)
		if err != nil {
			return nil, err
		}
		obj.Keys = append(obj.Keys, key)
		obj.Fields[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(dec, err)
	}
	return obj, nil
}

func parseArray(dec *json.Decoder, path string) (any, error) {
	arr := []any{}
	for dec.More() {
		v, err := parseValue(dec, fielderr.Index(path, len(arr)))
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(dec, err)
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
