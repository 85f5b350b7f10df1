package main

import (
	"context"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/durationflag"
	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/rules"
	"dagger/lowcode-pipeline/internal/secret"
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

// Send the payload to the platform's webhook: one POST with Authorization: Bearer, never sent twice
//
// Only a failure to connect at all is retried. Any status but 200 fails
// with the response body written out.
//
// +cache="session"
func (p *Payload) Deploy(
	ctx context.Context,
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Webhook token, e.g. env://WEBHOOK_TOKEN
	webhookToken *dagger.Secret,
	// Allow an http:// address (a local receiver); the token would travel unencrypted
	// +optional
	allowHttp bool,
	// Time limit for connecting (TCP and TLS)
	// +optional
	// +default="10s"
	connectTimeout string,
	// Time limit for the whole call, response included
	// +optional
	// +default="60s"
	timeout string,
	// How many times connecting is tried, the first included (never again once the request may have been received)
	// +optional
	// +default=4
	connectAttempts int,
	// CA certificate (PEM) that signs a self-hosted webhook's certificate; trusted by this call only, instead of the system's
	// +optional
	webhookCaCert *dagger.File,
) (_ *Receipt, err error) {
	defer userErr(&err)
	f := deployFlags{url: webhookUrl, token: webhookToken, allowHTTP: allowHttp, connectTimeout: connectTimeout, timeout: timeout,
		connectAttempts: connectAttempts, caCert: webhookCaCert}
	// what needs no read first: a bad flag fails without an engine round trip
	addr, err := f.address()
	if err != nil {
		return nil, err
	}
	token, caPEM, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	spec, err := f.spec(addr, token, caPEM)
	if err != nil {
		return nil, err
	}
	rec, err := spec.sendJSON(ctx, []byte(p.Json))
	if err != nil {
		return nil, err
	}
	return newReceipt(rec), nil
}

// The request deploy would send, the token masked: checks the payload and the address, sends nothing
func (p *Payload) Request(
	// Webhook address from the vendor, e.g. https://<client_host>/<project>/<instance>
	webhookUrl string,
	// Allow an http:// address (a local receiver)
	// +optional
	allowHttp bool,
) (_ string, err error) {
	defer userErr(&err)
	f := deployFlags{url: webhookUrl, allowHTTP: allowHttp, connectAttempts: defaultConnectAttempts}
	addr, err := f.address()
	if err != nil {
		return "", err
	}
	// the token is not needed to show the request: it is masked
	spec, err := f.spec(addr, secret.New("masked"), nil)
	if err != nil {
		return "", err
	}
	return spec.request([]byte(p.Json))
}

// The payload as a file, payload.json
func (p *Payload) File() *dagger.File {
	return dag.File("payload.json", p.Json)
}

// Where each backend image goes on an instance with these backends; fails on a backend that would receive two images and on an image that reaches no backend
func (p *Payload) Plan(
	// Name of one of the instance's backends (repeatable)
	backend []string,
	// Time limit for all the matching of the plan (a Go duration): a backstop for a slow machine or a huge plan, since rules that could match without end are refused
	// +optional
	// +default="60s"
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
	for _, im := range plan.Images {
		doc.Images = append(doc.Images, results.PlanImage{Image: im.Image, Rules: im.Rules, Backends: im.Backends})
	}
	for _, b := range plan.Backends {
		doc.Backends = append(doc.Backends, results.PlanBackend{Name: b.Backend, Images: b.Images, Rules: b.Rules})
	}
	return newPlan(doc, plan.Table()), nil
}

// newPlan is the Plan of doc, with its table for a person. Its fields hold
// the names and warnings printable, as its table and json do: dagger call
// prints a field as it is (a warning quotes a rule of the payload file).
func newPlan(doc results.Plan, table string) *Plan {
	out := &Plan{Summary: table, Json: results.JSON(doc), Warnings: fielderr.PrintableEach(doc.Warnings)}
	for _, im := range doc.Images {
		out.Images = append(out.Images, &PlanImage{Image: fielderr.Printable(im.Image), Rules: im.Rules, Backends: fielderr.PrintableEach(im.Backends)})
	}
	for _, b := range doc.Backends {
		out.Backends = append(out.Backends, &PlanBackend{Name: fielderr.Printable(b.Name), Images: fielderr.PrintableEach(b.Images), Rules: b.Rules})
	}
	return out
}

// composePayload reads the starting payload (--from), if any, and applies opts.
func composePayload(ctx context.Context, from *dagger.File, opts payload.Options) (*Payload, error) {
	base, err := readFile(ctx, from, "--from")
	if err != nil {
		return nil, err
	}
	return newPayload(base, opts)
}

// newPayload is base (nil: the reference default) with opts applied, checked.
func newPayload(base []byte, opts payload.Options) (*Payload, error) {
	start, err := payload.ParseStart(base)
	if err != nil {
		return nil, err
	}
	p, _, err := composed(start, opts)
	return p, err
}

// composed is the payload start composes with opts, and what it holds,
// checked: passed on as it is, read no more.
func composed(start *payload.Start, opts payload.Options) (*Payload, *payload.Payload, error) {
	doc, p, err := start.Compose(opts)
	if err != nil {
		return nil, nil, err
	}
	return &Payload{Summary: p.Summary(), Json: string(doc)}, p, nil
}

// edit applies opts to the payload, which stays checked.
func (p *Payload) edit(opts payload.Options) (*Payload, error) {
	return newPayload([]byte(p.Json), opts)
}
