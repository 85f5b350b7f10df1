// Package payload holds the deployment payload the webhook receives: its
// types with the spec's exact JSON names, the reference default, the build-up
// the reference pipelines do, and strict parsing and validation.
package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"dagger/lowcode-pipeline/internal/rules"
)

// Mode is the approval mode of codeAsData.updateMode and noDowntime.promotionMode.
type Mode string

const (
	ModeAuto   Mode = "auto"
	ModeManual Mode = "manual"
)

// ForceSync is the only value extraArgs accepts.
const ForceSync = "--force-sync"

// Payload is the webhook's request body. Sections are pointers and lists use
// omitzero so that what is absent stays absent and an explicit [] or false
// survives a round trip.
type Payload struct {
	Backends           *Backends   `json:"backends,omitempty"`
	CodeAsData         *CodeAsData `json:"codeAsData,omitempty"`
	Frontend           *Frontend   `json:"frontend,omitempty"`
	NoDowntime         *NoDowntime `json:"noDowntime,omitempty"`
	SkipUpdateVersions *bool       `json:"skipUpdateVersions,omitempty"`
	ExtraArgs          []string    `json:"extraArgs,omitzero"`
}

type Backends struct {
	Images      []string     `json:"images,omitzero"`
	DeployRules []rules.Rule `json:"deployRules,omitzero"`
}

type CodeAsData struct {
	Image      string `json:"image,omitempty"`
	UpdateMode Mode   `json:"updateMode,omitempty"`
}

type Frontend struct {
	Image string `json:"image,omitempty"`
}

type NoDowntime struct {
	PromotionMode Mode `json:"promotionMode,omitempty"`
}

// CatchAll is the rule of the reference default: every image to every backend.
var CatchAll = rules.Rule{Source: ".*", Target: ".*"}

// Default is the reference pipelines' starting point: a frontend object,
// backends with no images and a catch-all rule, and both approval modes manual.
// It is a template, not a payload to send: its frontend object waits for the
// run's image, so it fails Validate as it is. Compose fills it in, and drops
// the frontend object when the run has no frontend image, so what is sent is
// always valid.
func Default() *Payload {
	return &Payload{
		Frontend:   &Frontend{},
		Backends:   &Backends{Images: []string{}, DeployRules: []rules.Rule{CatchAll}},
		CodeAsData: &CodeAsData{UpdateMode: ModeManual},
		NoDowntime: &NoDowntime{PromotionMode: ModeManual},
	}
}

// Marshal renders the payload as indented JSON, with no HTML escaping so that
// regular expressions such as ^(?!a&b) read as written.
func (p *Payload) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Clone returns a deep copy, so build-up never changes its starting point.
func (p *Payload) Clone() *Payload {
	data, err := json.Marshal(p)
	if err != nil {
		panic(err) // the types hold only strings, bools and slices of them
	}
	var out Payload
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return &out
}

// Images lists the image references the payload deploys: frontend,
// backends, code as data.
func (p *Payload) Images() []string {
	var refs []string
	if p.Frontend != nil && p.Frontend.Image != "" {
		refs = append(refs, p.Frontend.Image)
	}
	if p.Backends != nil {
		refs = append(refs, p.Backends.Images...)
	}
	if p.CodeAsData != nil && p.CodeAsData.Image != "" {
		refs = append(refs, p.CodeAsData.Image)
	}
	return refs
}

// Summary says in one line what the payload deploys.
func (p *Payload) Summary() string {
	var parts []string
	if p.Frontend != nil {
		parts = append(parts, "frontend "+p.Frontend.Image)
	}
	if p.Backends != nil {
		parts = append(parts, fmt.Sprintf("%d backend image(s) with %d deploy rule(s)", len(p.Backends.Images), len(p.Backends.DeployRules)))
	}
	if p.CodeAsData != nil {
		c := "code as data"
		if p.CodeAsData.Image != "" {
			c += " " + p.CodeAsData.Image
		}
		parts = append(parts, fmt.Sprintf("%s (update mode %s)", c, orDefault(p.CodeAsData.UpdateMode)))
	}
	if p.NoDowntime != nil {
		parts = append(parts, "no-downtime promotion "+string(p.NoDowntime.PromotionMode))
	}
	if p.SkipUpdateVersions != nil && *p.SkipUpdateVersions {
		parts = append(parts, "skipping version updates")
	}
	if len(p.ExtraArgs) > 0 {
		parts = append(parts, "extra args "+strings.Join(p.ExtraArgs, " "))
	}
	if len(parts) == 0 {
		return "nothing to deploy"
	}
	return strings.Join(parts, "; ")
}

func orDefault(m Mode) Mode {
	if m == "" {
		return ModeAuto + " (default)"
	}
	return m
}
