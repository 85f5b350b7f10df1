package main

import (
	"context"
	"fmt"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/rules"
)

// Payload is a deployment payload, checked against every rule of the interface
type Payload struct {
	// One line saying what the payload deploys, for a person
	Summary string
	// The payload as JSON: what deploy sends, byte for byte
	Json string
}

// Plan is where each backend image of a payload goes, for one instance's backends
type Plan struct {
	// The plan as aligned columns, with its warnings, for a person
	Summary string
	// The whole plan as JSON, for a script
	Json string
	// Each backend image, with the rules that match it and the backends it reaches
	Images []*PlanImage
	// Each backend, with the image it receives and the rules that send it there
	Backends []*PlanBackend
	// Rules that match no image, backends that receive nothing
	Warnings []string
}

// PlanImage is one backend image of a plan
type PlanImage struct {
	// The image reference
	Image string
	// Indexes of the deploy rules whose source matches it
	Rules []int
	// The backends it reaches
	Backends []string
}

// PlanBackend is one backend of a plan
type PlanBackend struct {
	// The backend's name
	Name string
	// The image it receives (none or one)
	Images []string
	// Indexes of the deploy rules that send it there
	Rules []int
}

// A deployment payload: the reference default, or one you give, with this run's images
//
// Starts from the reference default (a frontend placeholder, no backend
// images, a catch-all deploy rule, both approval modes manual) or from
// --from, then sets the frontend image, appends the backend images and sets
// the code-as-data image only when given. The result is checked against
// every rule of the interface, with every problem at once.
func (m *LowcodePipeline) Payload(
	ctx context.Context,
	// Payload JSON file to start from instead of the reference default
	// +optional
	from *dagger.File,
	// Frontend image reference
	// +optional
	frontendRef string,
	// Backend image reference (repeatable)
	// +optional
	backendRef []string,
	// Code-as-data image reference: only when this run built one
	// +optional
	codeAsDataRef string,
) (_ *Payload, err error) {
	defer userErr(&err)
	return composePayload(ctx, from, payload.Options{FrontendImage: frontendRef, BackendImages: backendRef, CodeAsDataImage: codeAsDataRef})
}

// The deployment payload of this release: the reference default, or one you give, with the release's images
//
// Sets frontend.image, appends the backend image and sets codeAsData.image
// only when the release has one, each the first tag's reference pinned by
// digest. A --from that names an image of its own is refused, each named by
// its path: it would go out beside the release's (a stale backend, a
// code-as-data image this run did not build).
func (r *Release) Payload(
	ctx context.Context,
	// Payload JSON file to start from instead of the reference default; it names no image: the run's are the only ones sent
	// +optional
	from *dagger.File,
) (_ *Payload, err error) {
	defer userErr(&err)
	return composePayload(ctx, from, r.payloadOptions())
}

// payloadOptions are the release's images as a payload carries them.
func (r *Release) payloadOptions() payload.Options {
	refs := map[images.Kind]string{}
	for kind, pushed := range map[images.Kind][]*PushedImage{images.Frontend: r.Frontend, images.Backend: r.Backend, images.CodeAsData: r.CodeAsData} {
		if len(pushed) > 0 {
			refs[kind] = pushed[0].Ref
		}
	}
	return payloadOptionsOf(refs)
}

// payloadOptionsOf are images, by kind, as a payload carries them.
func payloadOptionsOf(refs map[images.Kind]string) payload.Options {
	opts := payload.Options{FrontendImage: refs[images.Frontend], CodeAsDataImage: refs[images.CodeAsData], ForARun: true}
	if ref := refs[images.Backend]; ref != "" {
		opts.BackendImages = []string{ref}
	}
	return opts
}

// Replace the deploy rules: each "SOURCE -> TARGET", JavaScript regular expressions matching image references and backend names
func (p *Payload) WithDeployRules(
	// Deploy rule "SOURCE -> TARGET" (repeatable, in order)
	deployRule []string,
) (*Payload, error) {
	rs, err := rules.ParseFlags("--deploy-rule", deployRule)
	if err != nil {
		return nil, err
	}
	return p.edit(payload.Options{DeployRules: rs})
}

// Set codeAsData.updateMode: manual deploys the code as data after an approval step
func (p *Payload) WithUpdateMode(
	// auto or manual
	mode ApprovalMode,
) (*Payload, error) {
	return p.withMode(mode, func(o *payload.Options, m payload.Mode) { o.UpdateMode = m })
}

// Set noDowntime.promotionMode: manual promotes after an approval step (instances with no-downtime mode)
func (p *Payload) WithPromotionMode(
	// auto or manual
	mode ApprovalMode,
) (*Payload, error) {
	return p.withMode(mode, func(o *payload.Options, m payload.Mode) { o.PromotionMode = m })
}

// withMode checks an approval mode and sets it where set says.
func (p *Payload) withMode(mode ApprovalMode, set func(*payload.Options, payload.Mode)) (*Payload, error) {
	m, err := payload.ParseMode("--mode", string(mode))
	if err != nil {
		return nil, err
	}
	var opts payload.Options
	set(&opts, m)
	return p.edit(opts)
}

// Set skipUpdateVersions to true: skip the orchestrator and toolkit update (only for dedicated snapshot versions of them)
func (p *Payload) WithSkipUpdateVersions() (*Payload, error) {
	skip := true
	return p.edit(payload.Options{SkipUpdateVersions: &skip})
}

// Add --force-sync to extraArgs: force the code as data to be synchronised to the orchestrator
func (p *Payload) WithForceSync() (*Payload, error) {
	return p.edit(payload.Options{ForceSync: true})
}

// The payload as a file, payload.json
func (p *Payload) File() *dagger.File {
	return dag.File("payload.json", p.Json)
}

// Where each backend image goes on an instance with these backends; fails on a backend that would receive two images and on an image that reaches no backend
func (p *Payload) Plan(
	// Name of one of the instance's backends (repeatable)
	backend []string,
	// Time limit for all the matching of the plan (a Go duration)
	// +optional
	// +default="5s"
	planTimeout string,
) (*Plan, error) {
	limit, err := durationflag.Optional("--plan-timeout", planTimeout)
	if err != nil {
		return nil, err
	}
	parsed, err := payload.Parse([]byte(p.Json))
	if err != nil {
		return nil, err
	}
	in := rules.Input{Backends: backend, PlanTimeout: limit}
	if parsed.Backends != nil {
		in.Images, in.Rules = parsed.Backends.Images, parsed.Backends.DeployRules
	}
	plan, err := rules.Build(in)
	if err != nil {
		return nil, err
	}
	if err := plan.Err(); err != nil {
		return nil, err
	}
	doc := results.Plan{Warnings: plan.Warnings}
	out := &Plan{Summary: plan.Table(), Warnings: plan.Warnings}
	for _, im := range plan.Images {
		doc.Images = append(doc.Images, results.PlanImage{Image: im.Image, Rules: im.Rules, Backends: im.Backends})
		out.Images = append(out.Images, &PlanImage{Image: im.Image, Rules: im.Rules, Backends: im.Backends})
	}
	for _, b := range plan.Backends {
		doc.Backends = append(doc.Backends, results.PlanBackend{Name: b.Backend, Images: b.Images, Rules: b.Rules})
		out.Backends = append(out.Backends, &PlanBackend{Name: b.Backend, Images: b.Images, Rules: b.Rules})
	}
	out.Json = results.JSON(doc)
	return out, nil
}

// composePayload reads the starting payload (--from), if any, and applies opts.
func composePayload(ctx context.Context, from *dagger.File, opts payload.Options) (*Payload, error) {
	var base []byte
	if from != nil {
		s, err := from.Contents(ctx)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		base = []byte(s)
	}
	return newPayload(base, opts)
}

// newPayload is base (nil: the reference default) with opts applied, checked.
func newPayload(base []byte, opts payload.Options) (*Payload, error) {
	doc, p, err := payload.Composed(base, opts)
	if err != nil {
		return nil, err
	}
	return &Payload{Summary: p.Summary(), Json: string(doc)}, nil
}

// edit applies opts to the payload, which stays checked.
func (p *Payload) edit(opts payload.Options) (*Payload, error) {
	doc, edited, err := payload.Composed([]byte(p.Json), opts)
	if err != nil {
		return nil, err
	}
	return &Payload{Summary: edited.Summary(), Json: string(doc)}, nil
}
