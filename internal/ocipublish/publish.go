package ocipublish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/secret"
)

// Normalize clamps every time the build wrote in the artifact to o.Epoch
// (normalizeImage on each platform's image, with that platform's base),
// writing what it makes into the artifact's layout, and checks, before
// anything is pushed, that it holds exactly the platforms asked for (none
// asked: one image, any platform). Attestation manifests are left out: they
// name the digests before normalization.
func Normalize(kind string, a Artifact, o Options) (Artifact, error) {
	imgs, descs, err := imagesOf(a)
	if err != nil {
		return Artifact{}, err
	}
	if err := checkPlatforms(kind, imgs, o.Platforms); err != nil {
		return Artifact{}, err
	}
	if descs == nil {
		d, err := normalizeImage(a.dir, imgs[0], o.Epoch, o.Verdicts, baseFor(o.Bases, imgs[0].config.Platform()))
		return Artifact{dir: a.dir, root: d}, err
	}
	im, err := readIndex(a.dir, a.root)
	if err != nil {
		return Artifact{}, err
	}
	out := v1.IndexManifest{SchemaVersion: 2, MediaType: im.MediaType}
	for i, img := range imgs {
		d, err := normalizeImage(a.dir, img, o.Epoch, o.Verdicts, baseFor(o.Bases, descs[i].Platform))
		if err != nil {
			return Artifact{}, fmt.Errorf("%s: %w", platformOf(descs[i].Platform), err)
		}
		d.Platform = descs[i].Platform
		out.Manifests = append(out.Manifests, d)
	}
	mt := im.MediaType
	if mt == "" {
		mt = a.root.MediaType
	}
	d, err := writeJSON(a.dir, mt, out)
	return Artifact{dir: a.dir, root: d}, err
}

// checkPlatforms fails when the images are not exactly the platforms asked.
func checkPlatforms(kind string, imgs []image, asked []string) error {
	if len(asked) == 0 {
		if len(imgs) != 1 {
			return fmt.Errorf("the %s image has %d platforms, and none was asked for; nothing was pushed", kind, len(imgs))
		}
		return nil
	}
	var have []string
	for _, img := range imgs {
		have = append(have, platformOf(img.config.Platform()))
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
	// MountFrom is the image's base (a reference, e.g. the pinned FROM of
	// the Dockerfile's last stage): when on the refs' registry, a blob the
	// repository lacks is mounted from the base's repository there before
	// it is sent, as docker push does, so a first push to a repository
	// sends no base layer the registry holds. "" for none.
	MountFrom string
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
	digest, _ := a.Digest()
	c := t.client()
	for i, ref := range t.Refs {
		r, err := c.repository(ctx, ref)
		if err != nil {
			return nil, err
		}
		write := pushArtifact
		if i > 0 { // the others only need the manifest
			write = tagRoot
		}
		if err := write(ctx, r, a); err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, t.pushErr(ctx, err))
		}
		held, err := resolve(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", ref, t.pushErr(ctx, err))
		}
		if held != digest {
			return nil, fmt.Errorf("%s: the registry holds %s, not the %s pushed", ref, held, digest)
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

// pushErr names the time limit when it is what stopped the push, and the
// login's flags first when the registry refused that login.
func (t Target) pushErr(ctx context.Context, err error) error {
	var resp *errcode.ErrorResponse
	refused := t.Password.Set() && errors.As(err, &resp) && resp.StatusCode == http.StatusUnauthorized
	err = registryErr(err)
	if refused {
		err = fmt.Errorf("the registry refused the login of --registry-username %s with --registry-password: %w", fielderr.Quote(t.Username), err)
	}
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
