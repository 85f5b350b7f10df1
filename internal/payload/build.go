package payload

import (
	"fmt"
	"reflect"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/jsontree"
	"dagger/lowcode-pipeline/internal/rules"
)

// Options are the build-up a pipeline run applies to its starting payload.
// Zero values leave the starting payload as it is.
type Options struct {
	FrontendImage   string
	BackendImages   []string
	CodeAsDataImage string // set only when this run built a code-as-data image
	// DeployRules, when not empty, replace the starting payload's rules.
	DeployRules        []rules.Rule
	UpdateMode         Mode
	PromotionMode      Mode
	SkipUpdateVersions *bool
	ForceSync          bool
	// ForARun: the images are a run's (publish … payload, deliver), so the
	// starting payload must name none: the interface's reference pipelines
	// start from one without, and an image it named would go out beside the
	// run's (a stale backend, a code-as-data image this run did not build).
	ForARun bool
}

// Build applies opts to a copy of base the way the reference pipelines do:
// set frontend.image, append each backend image, set codeAsData.image only
// when given. The result is not validated.
func Build(base *Payload, opts Options) *Payload {
	p := base.Clone()
	if opts.FrontendImage != "" {
		if p.Frontend == nil {
			p.Frontend = &Frontend{}
		}
		p.Frontend.Image = opts.FrontendImage
	}
	if len(opts.BackendImages) > 0 || len(opts.DeployRules) > 0 {
		if p.Backends == nil {
			p.Backends = &Backends{Images: []string{}}
		}
		p.Backends.Images = append(p.Backends.Images, opts.BackendImages...)
		if len(opts.DeployRules) > 0 {
			p.Backends.DeployRules = append([]rules.Rule{}, opts.DeployRules...)
		}
		if p.Backends.DeployRules == nil {
			p.Backends.DeployRules = []rules.Rule{CatchAll}
		}
	}
	if opts.CodeAsDataImage != "" || opts.UpdateMode != "" {
		if p.CodeAsData == nil {
			p.CodeAsData = &CodeAsData{}
		}
		if opts.CodeAsDataImage != "" {
			p.CodeAsData.Image = opts.CodeAsDataImage
		}
		if opts.UpdateMode != "" {
			p.CodeAsData.UpdateMode = opts.UpdateMode
		}
	}
	if opts.PromotionMode != "" {
		if p.NoDowntime == nil {
			p.NoDowntime = &NoDowntime{}
		}
		p.NoDowntime.PromotionMode = opts.PromotionMode
	}
	if opts.SkipUpdateVersions != nil {
		v := *opts.SkipUpdateVersions
		p.SkipUpdateVersions = &v
	}
	if opts.ForceSync && !contains(p.ExtraArgs, ForceSync) {
		p.ExtraArgs = append(p.ExtraArgs, ForceSync)
	}
	return p
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Start is a starting payload read once (ParseStart): its bytes as given,
// byte-order mark dropped (nil: the reference default), and what they hold,
// a template whose frontend may wait for its image. A run composes its
// payload from it (Start.Compose) as often as it needs, reading it no more.
type Start struct {
	raw []byte
	p   *Payload
}

// ParseStart reads a starting payload (nil: the reference default) as
// strictly as Parse, except that a frontend object may wait for its image.
func ParseStart(base []byte) (*Start, error) {
	if base == nil {
		return &Start{p: Default()}, nil
	}
	base = jsontree.StripBOM(base)
	p, err := ParseTemplate(base)
	if err != nil {
		return nil, fmt.Errorf("starting payload: %w", err)
	}
	return &Start{raw: base, p: p}, nil
}

// Compose builds the payload a run sends: the start with opts applied, and
// checked by every rule Parse applies to what it reads (the size cap
// included), so that it returns nothing Parse refuses: the payload is
// passed on as data, with its bytes, and read no more. A placeholder no
// image filled is dropped. When opts change nothing, the start's bytes are
// returned as they are, so what was checked is exactly what is sent.
func (s *Start) Compose(opts Options) ([]byte, *Payload, error) {
	if opts.ForARun && s.raw != nil {
		if err := s.p.namesNoImage(); err != nil {
			return nil, nil, fmt.Errorf("starting payload: %w", err)
		}
	}
	p := Build(s.p, opts)
	if p.Frontend != nil && p.Frontend.Image == "" {
		p.Frontend = nil
	}
	doc := s.raw
	if doc == nil || !reflect.DeepEqual(p, s.p) {
		var err error
		if doc, err = p.Marshal(); err != nil {
			return nil, nil, err
		}
	}
	if err := checkBuilt(doc, p); err != nil {
		return nil, nil, fmt.Errorf("the built payload is invalid: %w", err)
	}
	return doc, p, nil
}

// Compose is ParseStart(base) composed with opts, for one composition.
func Compose(base []byte, opts Options) ([]byte, *Payload, error) {
	start, err := ParseStart(base)
	if err != nil {
		return nil, nil, err
	}
	return start.Compose(opts)
}

// namesNoImage refuses a starting payload that names an image, each by its
// path: a run's images are the only ones its payload carries.
func (p *Payload) namesNoImage() error {
	var errs fielderr.List
	const why = "the run sets its own images, and the interface's reference pipelines start from a payload without image references: remove it, or send the file as it is with payload --from"
	if p.Frontend != nil && p.Frontend.Image != "" {
		errs.Addf("frontend.image", "%s is named in the starting payload; %s", fielderr.Quote(p.Frontend.Image), why)
	}
	if p.Backends != nil {
		for i, im := range p.Backends.Images {
			errs.Addf(fielderr.Index("backends.images", i), "%s is named in the starting payload; %s", fielderr.Quote(im), why)
		}
	}
	if p.CodeAsData != nil && p.CodeAsData.Image != "" {
		errs.Addf("codeAsData.image", "%s is named in the starting payload; %s", fielderr.Quote(p.CodeAsData.Image), why)
	}
	return errs.Err()
}
