package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/secret"
)

// Delivery is one run of the pipeline: the build, the images pushed, the payload sent and the webhook's receipt
type Delivery struct {
	// The images pushed and the deployment's receipt, for a person
	Summary string
	// The release and the receipt as JSON, for a script
	Json string
	// The build
	Build *Build
	// The images pushed, pinned by digest
	Release *Release
	// The payload sent
	Payload *Payload
	// The webhook's answer
	Receipt *Receipt
	// Where the call's time went, step by step
	Steps []*StepTime
}

// How long one of a delivery's steps took in its call
type StepTime struct {
	// build (the install, and the design-tool version), publish (the builds, which run when first used, the images and their pushes), payload or deploy
	Step string
	// Its time in milliseconds
	Ms int
}

// newDelivery is the Delivery of doc and the steps' objects.
func newDelivery(doc results.Delivery, b *Build, rel *Release, p *Payload, rec *Receipt) *Delivery {
	d := &Delivery{Summary: doc.Text(), Json: results.JSON(doc), Build: b, Release: rel, Payload: p, Receipt: rec}
	for _, st := range doc.Steps {
		d.Steps = append(d.Steps, &StepTime{Step: st.Step, Ms: int(st.Ms)})
	}
	return d
}

// deliveryFlags are deliver's flags as given: its steps'.
type deliveryFlags struct {
	build   buildFlags
	publish publishFlags
	deploy  deployFlags
	payload *dagger.File // --payload
}

// deliverySpec is the three steps' specs, made and checked at once before
// anything is built, with what deliver reads of its files and secret.
type deliverySpec struct {
	build   *buildSpec
	publish *publishSpec
	deploy  *deploySpec
	payload *payload.Start // --payload, read once; the reference default without
}

// newDeliverySpec reads the token, the CA certificate, --payload and the
// project (concurrently: engine round trips), then makes each step's spec
// and joins their errors, so that a bad flag fails in a second, with every
// other.
func newDeliverySpec(ctx context.Context, f deliveryFlags) (*deliverySpec, error) {
	var (
		token       secret.Text
		caPEM, base []byte
		project     *projectFacts
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { token, caPEM, err = f.deploy.read(gctx); return err })
	g.Go(func() (err error) { base, err = readFile(gctx, f.payload, "--payload"); return err })
	g.Go(func() (err error) { project, err = readProject(gctx, f.build); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return checkDelivery(f, project, token, caPEM, base)
}

// checkDelivery makes each step's spec, with the project, the token, the CA
// certificate and the starting payload read, and joins their errors.
func checkDelivery(f deliveryFlags, project *projectFacts, token secret.Text, caPEM, base []byte) (*deliverySpec, error) {
	s := &deliverySpec{}
	var errs [5]error
	s.build, errs[0] = newBuildSpec(f.build, project)
	// the build's own checks say what is wrong with --code-as-data
	s.publish, errs[1] = newPublishSpec(f.publish, s.build != nil && s.build.codeAsData != nil,
		project.manifest.Tool(f.build.drawPackage, nodebuild.DrawPackage) != "")
	addr, err := f.deploy.address()
	if errs[4] = err; addr != nil {
		s.deploy, errs[2] = f.deploy.spec(addr, token, caPEM)
	}
	if s.payload, errs[3] = payload.ParseStart(base); errs[3] == nil && s.publish != nil {
		// the payload is composed with the references it will carry, digests unknown yet
		_, _, errs[3] = s.payload.Compose(payloadOptionsOf(images.Placeholders(s.publish.targets)))
	}
	if errs[3] != nil {
		errs[3] = fmt.Errorf("--payload: %w", errs[3])
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return s, nil
}

// run builds, publishes, composes the payload and deploys it, each step in
// a span of its own and timed. The engine's laziness overlaps the work: an
// image's base is pulled when its build first needs it.
func (s *deliverySpec) run(ctx context.Context) (_ *Delivery, err error) {
	var steps []results.StepTime
	b, err := inStep(ctx, &steps, "build", s.build.run)
	if err != nil {
		return nil, err
	}
	rel, err := inStep(ctx, &steps, "publish", func(ctx context.Context) (*Release, error) { return s.publish.run(ctx, b) })
	if err != nil {
		return nil, err
	}
	// the payload and the deployment use what the check read: the file and
	// the token checked are the ones sent, read once
	var parsed *payload.Payload
	p, err := inStep(ctx, &steps, "payload", func(context.Context) (p *Payload, err error) {
		p, parsed, err = composed(s.payload, rel.payloadOptions())
		return p, err
	})
	if err != nil {
		return nil, err
	}
	rec, err := inStep(ctx, &steps, "deploy", func(ctx context.Context) (results.Receipt, error) { return s.deploy.send(ctx, []byte(p.Json), parsed) })
	if err != nil {
		return nil, err
	}
	relDoc, err := rel.document()
	if err != nil {
		return nil, err
	}
	buildDoc := results.Build{HasCodeAsData: b.HasCodeAsData, DrawVersion: b.DrawVersion, Warnings: b.Warnings}
	return newDelivery(results.Delivery{Build: buildDoc, Release: relDoc, Receipt: rec, Steps: steps}, b, rel, p, newReceipt(rec)), nil
}

// inStep runs one of deliver's steps in its span (inSpan) and adds how long
// it took to steps.
func inStep[T any](ctx context.Context, steps *[]results.StepTime, name string, f func(context.Context) (T, error)) (T, error) {
	start := time.Now()
	defer func() { *steps = append(*steps, results.StepTime{Step: name, Ms: time.Since(start).Milliseconds()}) }()
	return inSpan(ctx, name, f)
}
