package ocipublish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/secret"
)

// Artifact is what is pushed: one image, or an index of one per platform.
type Artifact interface {
	Digest() (v1.Hash, error)
}

// Load reads the image of an OCI image layout (Container.asTarball,
// unpacked): its index's first manifest, an image or a platform index.
func Load(dir string) (Artifact, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout: %w", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout's index: %w", err)
	}
	root, err := rootOf(im)
	if err != nil {
		return nil, err
	}
	if root.MediaType.IsIndex() {
		return idx.ImageIndex(root.Digest)
	}
	return idx.Image(root.Digest)
}

// Normalize clamps every time the build wrote in the artifact to o.Epoch
// (NormalizeImage on each platform's image, with that platform's base) and
// checks, before anything is pushed, that it holds exactly the platforms
// asked for (none asked: one image, any platform). Attestation manifests
// are left out: they name the digests before normalization.
func Normalize(kind string, a Artifact, o Options) (Artifact, error) {
	imgs, descs, err := imagesOf(a)
	if err != nil {
		return nil, err
	}
	if err := checkPlatforms(kind, imgs, o.Platforms); err != nil {
		return nil, err
	}
	if idx, ok := a.(v1.ImageIndex); ok {
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		out := mutate.IndexMediaType(empty.Index, im.MediaType)
		for i, img := range imgs {
			n, err := NormalizeImage(img, o.Epoch, o.Verdicts, baseFor(o.Bases, descs[i].Platform))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", platformOf(descs[i].Platform), err)
			}
			out = mutate.AppendManifests(out, mutate.IndexAddendum{Add: n, Descriptor: v1.Descriptor{Platform: descs[i].Platform}})
		}
		return out, nil
	}
	cfg, err := imgs[0].ConfigFile()
	if err != nil {
		return nil, err
	}
	return NormalizeImage(imgs[0], o.Epoch, o.Verdicts, baseFor(o.Bases, cfg.Platform()))
}

// imagesOf are the images of an artifact, with their descriptors in its
// index (none for a lone image), attestation manifests left out.
func imagesOf(a Artifact) ([]v1.Image, []v1.Descriptor, error) {
	switch a := a.(type) {
	case v1.Image:
		return []v1.Image{a}, nil, nil
	case v1.ImageIndex:
		im, err := a.IndexManifest()
		if err != nil {
			return nil, nil, err
		}
		var imgs []v1.Image
		var descs []v1.Descriptor
		for _, d := range im.Manifests {
			if !d.MediaType.IsImage() || d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
				continue
			}
			img, err := a.Image(d.Digest)
			if err != nil {
				return nil, nil, err
			}
			imgs, descs = append(imgs, img), append(descs, d)
		}
		return imgs, descs, nil
	}
	return nil, nil, fmt.Errorf("unknown artifact %T", a)
}

// checkPlatforms fails when the images are not exactly the platforms asked.
func checkPlatforms(kind string, imgs []v1.Image, asked []string) error {
	if len(asked) == 0 {
		if len(imgs) != 1 {
			return fmt.Errorf("the %s image has %d platforms, and none was asked for; nothing was pushed", kind, len(imgs))
		}
		return nil
	}
	var have []string
	for _, img := range imgs {
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		have = append(have, platformOf(cfg.Platform()))
	}
	return images.CheckPlatforms(kind, asked, have)
}

func platformOf(p *v1.Platform) string {
	if p == nil {
		return "unknown"
	}
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Target is where an artifact goes.
type Target struct {
	// Refs are registry/repository:tag, all of one repository.
	Refs []string
	// Connect, when set, is the address (host:port) to reach the registry
	// at instead of the refs' host: a Dagger service bound into the pushing
	// container under another name. The refs, and so the result, keep theirs.
	Connect string
	// Insecure speaks plain http to the registry (a local one only).
	Insecure bool
	// Username and Password log in; no password: anonymous.
	Username string
	Password secret.Text
	// Timeout bounds the whole push.
	Timeout time.Duration
}

// Pushed is one reference pushed, pinned by digest.
type Pushed struct {
	Ref     string `json:"ref"` // registry/repository:tag@sha256:…
	Digest  string `json:"digest"`
	Outcome string `json:"outcome"` // how this run left the tag: OutcomePushed, OutcomeTagged or OutcomeUnchanged
}

// How a run left a tag (Pushed.Outcome).
const (
	OutcomePushed    = "pushed"    // the image was pushed, and the tag written
	OutcomeTagged    = "tagged"    // the tag was pointed at an image the repository held already (Retag)
	OutcomeUnchanged = "unchanged" // the tag held the image already
)

// Push writes the artifact under the first ref, tags it with the others,
// and reads each back to check the registry holds that digest.
func Push(ctx context.Context, a Artifact, t Target) ([]Pushed, error) {
	ctx, cancel, err := t.start(ctx, "no reference to push to", "the push did not finish")
	defer cancel()
	if err != nil {
		return nil, err
	}
	digest, err := a.Digest()
	if err != nil {
		return nil, err
	}
	opts := t.options(ctx)
	for i, ref := range t.Refs {
		tag, err := t.tag(ref)
		if err != nil {
			return nil, err
		}
		if err := write(i, tag, a, opts); err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, pushErr(ctx, err))
		}
		desc, err := remote.Head(tag, opts...)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, pushErr(ctx, err))
		}
		if desc.Digest != digest {
			return nil, fmt.Errorf("%s: the registry holds %s, not the %s pushed", ref, desc.Digest, digest)
		}
	}
	return pinned(t.Refs, digest, func(string) string { return OutcomePushed }), nil
}

// start checks that t has refs (noRefs is the error when not) and bounds
// ctx by t.Timeout, its error saying what did not happen in time (limit).
func (t Target) start(ctx context.Context, noRefs, limit string) (context.Context, context.CancelFunc, error) {
	if len(t.Refs) == 0 {
		return ctx, func() {}, errors.New(noRefs)
	}
	if t.Timeout <= 0 {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, t.Timeout, fmt.Errorf("%s within %s", limit, t.Timeout))
	return ctx, cancel, nil
}

// options are go-containerregistry's options for reaching t's registry:
// its login (none: anonymous), within ctx.
func (t Target) options(ctx context.Context) []remote.Option {
	auth := authn.Anonymous
	if t.Password.Set() {
		auth = authn.FromConfig(authn.AuthConfig{Username: t.Username, Password: t.Password.Reveal()})
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithJobs(4),
		remote.WithTransport(http.DefaultTransport.(*http.Transport).Clone())}
}

// AlreadyPushed is refs when the registry already serves digest under each:
// every ref pinned by it, unchanged.
func AlreadyPushed(refs []string, digest v1.Hash) []Pushed {
	return pinned(refs, digest, func(string) string { return OutcomeUnchanged })
}

// pinned is each ref pinned by digest, with its outcome.
func pinned(refs []string, digest v1.Hash, outcome func(ref string) string) []Pushed {
	out := make([]Pushed, 0, len(refs))
	for _, ref := range refs {
		out = append(out, Pushed{Ref: ref + "@" + digest.String(), Digest: digest.String(), Outcome: outcome(ref)})
	}
	return out
}

// LayoutDigest is the digest of the artifact an OCI layout's index.json
// names first: the one Load reads, and Push pushes.
func LayoutDigest(indexJSON []byte) (v1.Hash, error) {
	im, err := v1.ParseIndexManifest(bytes.NewReader(indexJSON))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("read the OCI layout's index: %w", err)
	}
	root, err := rootOf(im)
	return root.Digest, err
}

// rootOf is the artifact an OCI layout's index names first: its image.
func rootOf(im *v1.IndexManifest) (v1.Descriptor, error) {
	if len(im.Manifests) == 0 {
		return v1.Descriptor{}, errors.New("the OCI layout holds no image")
	}
	return im.Manifests[0], nil
}

// write pushes the artifact whole under the first tag; the others only
// need the manifest.
func write(i int, tag name.Tag, a Artifact, opts []remote.Option) error {
	if i > 0 {
		return remote.Tag(tag, a.(remote.Taggable), opts...)
	}
	switch a := a.(type) {
	case v1.ImageIndex:
		return remote.WriteIndex(tag, a, opts...)
	case v1.Image:
		return remote.Write(tag, a, opts...)
	}
	return fmt.Errorf("unknown artifact %T", a)
}

// tag is ref as go-containerregistry reaches it.
func (t Target) tag(ref string) (name.Tag, error) {
	var opts []name.Option
	if t.Insecure {
		opts = append(opts, name.Insecure)
	}
	parsed, err := name.NewTag(ref, append(opts, name.StrictValidation)...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("reference %s: %w", fielderr.Quote(ref), err)
	}
	if t.Connect == "" {
		return parsed, nil
	}
	return name.NewTag(t.Connect+"/"+parsed.RepositoryStr()+":"+parsed.TagStr(), opts...)
}

// pushErr names the time limit when it is what stopped the push.
func pushErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("%w (%v)", cause, fielderr.Cut(err.Error(), 300))
	}
	return err
}

// ConnectAddress is where a registry run as a Dagger service is reached
// from the pushing container, bound there as alias: the alias with the
// registry's port, if it has one.
func ConnectAddress(registry, alias string) string {
	if i := strings.LastIndex(registry, ":"); i >= 0 && !strings.Contains(registry[i:], "]") {
		return alias + registry[i:]
	}
	return alias
}
