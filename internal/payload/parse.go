package payload

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/jsontree"
	"dagger/lowcode-pipeline/internal/rules"
)

// Parse reads a payload strictly: unknown keys, duplicate keys and wrong JSON
// types are errors, then every rule of the spec is checked. All problems come
// back at once as a fielderr.List; the payload is returned only when valid.
func Parse(data []byte) (*Payload, error) {
	return parse(data, false)
}

// ParseTemplate reads a starting payload as strictly as Parse, except that a
// frontend object may wait for its image, as in the reference default.
func ParseTemplate(data []byte) (*Payload, error) {
	return parse(data, true)
}

// MaxSize caps a payload: a real one is a few kilobytes, and a webhook
// gains nothing from a larger one that costs minutes to check.
const MaxSize = 1 << 20

func parse(data []byte, template bool) (*Payload, error) {
	if err := checkSize(data); err != nil {
		return nil, err
	}
	if err := checkLoneCR(data); err != nil {
		return nil, err
	}
	tree, err := jsontree.Parse(data)
	if err != nil {
		return nil, err
	}
	d := decoder{bad: map[string]bool{}}
	p := d.payload(tree)
	errs := append(d.errs, validate(p, d.bad, template)...)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkLoneCR refuses a carriage return that no line feed follows, which
// JSON takes as white space between values: the payload is sent and shown
// byte for byte (its json field), and a terminal printing it would write
// what follows over the line shown. CRLF line endings are kept.
func checkLoneCR(data []byte) error {
	for i, b := range data {
		if b == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return fmt.Errorf("invalid JSON at byte %d: a carriage return without a line feed, which a terminal showing the payload would act on: save the file with LF or CRLF line endings", i)
		}
	}
	return nil
}

// checkSize refuses a payload over MaxSize.
func checkSize(data []byte) error {
	if len(data) > MaxSize {
		return fmt.Errorf("the payload has %d bytes: at most %d (1 MiB)", len(data), MaxSize)
	}
	return nil
}

// checkBuilt checks a payload built in Go (p) and its bytes (doc) as Parse
// checks what it reads: what decoding checks, Go's types and Marshal hold
// (FuzzCompose reads the bytes back to prove it), the rest is validate's.
func checkBuilt(doc []byte, p *Payload) error {
	if err := checkSize(doc); err != nil {
		return err
	}
	return validate(p, map[string]bool{}, false).Err()
}

// decoder turns the JSON tree into a Payload, recording type problems and
// the paths they were found at (so validation does not report them twice).
type decoder struct {
	errs fielderr.List
	bad  map[string]bool
}

func (d *decoder) fail(path, format string, args ...any) {
	d.bad[path] = true
	d.errs.Addf(path, format, args...)
}

func (d *decoder) object(path string, v any, known ...string) *jsontree.Object {
	obj, ok := v.(*jsontree.Object)
	if !ok {
		d.fail(path, "must be an object, got %s", describe(v))
		return nil
	}
	for _, k := range obj.Keys {
		if !slices.Contains(known, k) {
			d.fail(fielderr.Join(path, k), "unknown key%s; allowed here: %s", suggest(k, known), strings.Join(known, ", "))
		}
	}
	return obj
}

func (d *decoder) str(path string, v any) string {
	s, ok := v.(string)
	if !ok {
		d.fail(path, "must be a string, got %s", describe(v))
	}
	return s
}

func (d *decoder) strings(path string, v any) []string {
	arr, ok := v.([]any)
	if !ok {
		d.fail(path, "must be an array of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		out = append(out, d.str(fielderr.Index(path, i), e))
	}
	return out
}

func (d *decoder) payload(v any) *Payload {
	obj := d.object("", v, "backends", "codeAsData", "frontend", "noDowntime", "skipUpdateVersions", "extraArgs")
	p := &Payload{}
	if obj == nil {
		d.bad[""] = true
		return p
	}
	f := obj.Fields
	if v, ok := f["backends"]; ok {
		p.Backends = d.backends(v)
	}
	if v, ok := f["codeAsData"]; ok {
		p.CodeAsData = &CodeAsData{}
		if o := d.object("codeAsData", v, "image", "updateMode"); o != nil {
			if v, ok := o.Fields["image"]; ok {
				p.CodeAsData.Image = d.str("codeAsData.image", v)
				if v == "" {
					d.fail("codeAsData.image", "empty image reference: leave codeAsData.image out when this run deploys no code-as-data image")
				}
			}
			if v, ok := o.Fields["updateMode"]; ok {
				p.CodeAsData.UpdateMode = Mode(d.str("codeAsData.updateMode", v))
				if v == "" {
					// it would be sent as it is: leaving it out means auto
					d.fail("codeAsData.updateMode", "invalid value \"\": allowed values are %q and %q (leave it out for the default, %q)", ModeAuto, ModeManual, ModeAuto)
				}
			}
		}
	}
	if v, ok := f["frontend"]; ok {
		p.Frontend = &Frontend{}
		if o := d.object("frontend", v, "image"); o != nil {
			if v, ok := o.Fields["image"]; ok {
				p.Frontend.Image = d.str("frontend.image", v)
			}
		}
	}
	if v, ok := f["noDowntime"]; ok {
		p.NoDowntime = &NoDowntime{}
		if o := d.object("noDowntime", v, "promotionMode"); o != nil {
			if v, ok := o.Fields["promotionMode"]; ok {
				p.NoDowntime.PromotionMode = Mode(d.str("noDowntime.promotionMode", v))
				if v == "" { // given, so shown: not the "required" of a missing one
					d.fail("noDowntime.promotionMode", "invalid value \"\": allowed values are %q and %q", ModeAuto, ModeManual)
				}
			}
		}
	}
	if v, ok := f["skipUpdateVersions"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			d.fail("skipUpdateVersions", "must be a boolean (true or false), got %s", describe(v))
		}
		p.SkipUpdateVersions = &b
	}
	if v, ok := f["extraArgs"]; ok {
		p.ExtraArgs = d.strings("extraArgs", v)
	}
	return p
}

func (d *decoder) backends(v any) *Backends {
	b := &Backends{}
	o := d.object("backends", v, "images", "deployRules")
	if o == nil {
		return b
	}
	if v, ok := o.Fields["images"]; ok {
		b.Images = d.strings("backends.images", v)
	}
	v, ok := o.Fields["deployRules"]
	if !ok {
		return b
	}
	arr, isArr := v.([]any)
	if !isArr {
		d.fail("backends.deployRules", "must be an array of {\"source\", \"target\"} objects, got %s", describe(v))
		return b
	}
	b.DeployRules = make([]rules.Rule, 0, len(arr))
	for i, e := range arr {
		path := fielderr.Index("backends.deployRules", i)
		var r rules.Rule
		if ro := d.object(path, e, "source", "target"); ro != nil {
			for _, field := range []struct {
				name string
				dst  *string
			}{{"source", &r.Source}, {"target", &r.Target}} {
				fp := fielderr.Join(path, field.name)
				if fv, ok := ro.Fields[field.name]; ok {
					*field.dst = d.str(fp, fv)
				} else {
					d.fail(fp, "required: a regular expression matching %s", map[string]string{"source": "image references", "target": "backend names"}[field.name])
				}
			}
		}
		b.DeployRules = append(b.DeployRules, r)
	}
	return b
}

// describe names a value's JSON type, with the value itself when it is short.
func describe(v any) string {
	switch t := v.(type) {
	case string:
		return "string " + fielderr.Quote(t)
	case json.Number:
		return fmt.Sprintf("%s %s", jsontree.TypeName(v), fielderr.Cut(t.String(), fielderr.MaxValue))
	case bool:
		return fmt.Sprintf("%s %v", jsontree.TypeName(v), t)
	}
	return jsontree.TypeName(v)
}

// suggest proposes the known key closest to a misspelt one.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(key), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
