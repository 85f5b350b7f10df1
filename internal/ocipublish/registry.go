package ocipublish

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// A registry is reached with oras-go (oras.land/oras-go/v2): its registry
// client speaks the distribution API, logs in (basic, or a bearer token from
// the registry's realm) and retries what a registry asks to retry, with a
// compile a fraction of go-containerregistry's remote package's, which brings
// zstd, estargz and the docker CLI's configuration with it.

// repository is a ref as the push reaches it: the repository on the registry
// (t.Connect when set), and the ref's tag.
type repository struct {
	repo *remote.Repository
	tag  string
	name string // the ref's repository, as the ref names it (its registry, not t.Connect)
	// mountFrom is the repository of the same registry a blob the
	// repository lacks is mounted from (Target.MountFrom); "" for none
	mountFrom string
}

// client logs in to t's registry (no password: anonymous) over a transport
// that retries; one for every ref of a push, so a token is fetched once.
type client struct {
	t    Target
	http *auth.Client
	mu   sync.Mutex
	// plain is, per host reached, whether it speaks plain http (probed once)
	plain map[string]bool
}

func (t Target) client() *client {
	c := &client{t: t, plain: map[string]bool{}}
	c.http = &auth.Client{
		Client: &http.Client{Transport: retry.NewTransport(http.DefaultTransport.(*http.Transport).Clone())},
		Cache:  auth.NewCache(),
	}
	if t.Password.Set() {
		// the login goes to the registry the refs are reached at only
		host := t.Connect
		if tag, err := name.NewTag(firstOf(t.Refs)); host == "" && err == nil {
			host = tag.RegistryStr()
		}
		c.http.Credential = auth.StaticCredential(host, auth.Credential{Username: t.Username, Password: t.Password.Reveal()})
	}
	return c
}

func firstOf(refs []string) string {
	if len(refs) == 0 {
		return ""
	}
	return refs[0]
}

// repository parses ref (registry/repository:tag, nothing left implicit)
// and points it at the registry the push reaches.
func (c *client) repository(ctx context.Context, ref string) (repository, error) {
	var opts []name.Option
	if c.t.Insecure {
		opts = append(opts, name.Insecure)
	}
	parsed, err := name.NewTag(ref, append(opts, name.StrictValidation)...)
	if err != nil {
		return repository{}, fmt.Errorf("reference %s: %w", fielderr.Quote(ref), err)
	}
	reg := parsed.Registry
	if c.t.Connect != "" {
		if reg, err = name.NewRegistry(c.t.Connect, opts...); err != nil {
			return repository{}, fmt.Errorf("registry address %s: %w", fielderr.Quote(c.t.Connect), err)
		}
	}
	repo := &remote.Repository{
		Client:    c.http,
		Reference: registry.Reference{Registry: reg.RegistryStr(), Repository: parsed.RepositoryStr()},
		PlainHTTP: c.plainHTTP(ctx, reg),
	}
	return repository{repo: repo, tag: parsed.TagStr(), name: parsed.Context().Name(), mountFrom: c.mountFrom(parsed, opts)}, nil
}

// mountFrom is the repository of t.MountFrom when it is on the registry of
// the ref to (the registry as the refs name it, not t.Connect: a registry
// reached under another name holds no base known here); "" otherwise.
func (c *client) mountFrom(to name.Tag, opts []name.Option) string {
	if c.t.MountFrom == "" || c.t.Connect != "" {
		return ""
	}
	from, err := name.ParseReference(c.t.MountFrom, opts...)
	if err != nil || from.Context().RegistryStr() != to.RegistryStr() || from.Context().RepositoryStr() == to.RepositoryStr() {
		return ""
	}
	return from.Context().RepositoryStr()
}

// plainHTTP is whether reg is spoken to in plain http: as
// go-containerregistry does, https first for a registry that may use
// either (Insecure, localhost, a loopback or private address), plain http
// when https cannot be spoken there at all. A registry that speaks https
// with a certificate not trusted here is spoken to in https, so its
// requests fail for that reason (registryErr says what to do), not with the
// 400 Bad Request an https server answers plain http with.
func (c *client) plainHTTP(ctx context.Context, reg name.Registry) bool {
	if reg.Scheme() != "http" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	host := reg.RegistryStr()
	if plain, ok := c.plain[host]; ok {
		return plain
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+"/v2/", nil)
	plain := true
	if err == nil {
		resp, err := c.http.Client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		plain = err != nil && !untrustedCertificate(err)
	}
	c.plain[host] = plain
	return plain
}

// pushArtifact writes every blob and manifest of a into r's repository,
// then its root under r's tag.
func pushArtifact(ctx context.Context, r repository, a Artifact) error {
	blobs, manifests, err := contentOf(a)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, d := range blobs {
		g.Go(func() error { return pushBlob(gctx, r, a, d) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, d := range manifests {
		data, err := readBlob(a.dir, d)
		if err != nil {
			return err
		}
		if err := r.repo.Manifests().Push(ctx, ociDescriptor(d), bytes.NewReader(data)); err != nil {
			return err
		}
	}
	return tagRoot(ctx, r, a)
}

// tagRoot writes a's root manifest under r's tag; the repository holds
// what it names already.
func tagRoot(ctx context.Context, r repository, a Artifact) error {
	data, err := readBlob(a.dir, a.root)
	if err != nil {
		return err
	}
	return pushManifest(ctx, r, a.root, data)
}

// pushBlob uploads a's blob d unless the repository has it. A blob another
// push of this process is uploading to another repository of the registry
// is waited for and mounted from there (sent only when the mount fails).
func pushBlob(ctx context.Context, r repository, a Artifact, d v1.Descriptor) error {
	desc := ociDescriptor(d)
	if ok, err := r.repo.Blobs().Exists(ctx, desc); err != nil || ok {
		return err
	}
	key := uploadKey{registry: r.repo.Reference.Registry, digest: d.Digest}
	up, first := uploaded.claim(key, r.repo.Reference.Repository)
	if first {
		err := sendBlob(ctx, r, a, d)
		uploaded.finish(key, up, err == nil)
		return err
	}
	select {
	case <-up.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if up.ok {
		if up.repo == r.repo.Reference.Repository {
			return nil
		}
		open := func() (io.ReadCloser, error) { return openBlob(ctx, a, d) }
		if err := r.repo.Mount(ctx, desc, up.repo, open); err == nil {
			return nil
		}
	}
	return uploadBlob(ctx, r.repo, a, d)
}

// sendBlob mounts a's blob d from r.mountFrom, the base image's repository
// on the same registry, as docker push does: a base layer is then neither
// fetched nor sent. A registry that does not mount it (not there, not
// allowed, no mounts) starts the blob's upload instead, which goes on with
// the blob; one that refuses the request gets the blob uploaded.
func sendBlob(ctx context.Context, r repository, a Artifact, d v1.Descriptor) error {
	if r.mountFrom == "" {
		return uploadBlob(ctx, r.repo, a, d)
	}
	open := func() (io.ReadCloser, error) { return openBlob(ctx, a, d) }
	err := r.repo.Mount(ctx, ociDescriptor(d), r.mountFrom, open)
	if err == nil || ctx.Err() != nil {
		return err
	}
	return uploadBlob(ctx, r.repo, a, d)
}

// uploadBlob sends a's blob d, fetching it first when a's layout lacks it.
func uploadBlob(ctx context.Context, repo *remote.Repository, a Artifact, d v1.Descriptor) error {
	f, err := openBlob(ctx, a, d)
	if err != nil {
		return err
	}
	defer f.Close()
	return repo.Blobs().Push(ctx, ociDescriptor(d), f)
}

// openBlob opens a's blob d, fetched first when a's layout lacks it.
func openBlob(ctx context.Context, a Artifact, d v1.Descriptor) (io.ReadCloser, error) {
	path := blobPath(a.dir, d.Digest)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && a.fetch != nil {
		if err := a.fetch(ctx, d.Digest, path); err != nil {
			return nil, fmt.Errorf("fetch the layer %s: %w", d.Digest, err)
		}
	}
	return os.Open(path)
}

// uploaded is what this process's pushes send, per registry and blob:
// deliver pushes its images side by side, often of one base, whose layers
// are the same blobs in every image (the registry's, or re-encoded alike).
var uploaded = &uploads{m: map[uploadKey]*upload{}}

type uploadKey struct {
	registry string
	digest   v1.Hash
}

// upload is one push's sending of a blob: done closes when it ended, ok
// then says whether repo holds the blob.
type upload struct {
	done chan struct{}
	repo string
	ok   bool
}

type uploads struct {
	mu sync.Mutex
	m  map[uploadKey]*upload
}

// claim is the upload of k another push began (first false), or this
// push's own, which it ends with finish.
func (u *uploads) claim(k uploadKey, repo string) (_ *upload, first bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if up, ok := u.m[k]; ok {
		return up, false
	}
	up := &upload{done: make(chan struct{}), repo: repo}
	u.m[k] = up
	return up, true
}

// finish ends up, k's upload: a failed one is forgotten, so the next push
// of the blob sends it itself.
func (u *uploads) finish(k uploadKey, up *upload, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up.ok = ok
	if !ok {
		delete(u.m, k)
	}
	close(up.done)
}

// contentOf is what pushing a needs before its root: the blobs (configs,
// layers) of each of its images, each once, and, for an index, the images'
// manifests.
func contentOf(a Artifact) (blobs, manifests []v1.Descriptor, err error) {
	imgs, descs, err := imagesOf(a)
	if err != nil {
		return nil, nil, err
	}
	seen := map[v1.Hash]bool{}
	for _, img := range imgs {
		for _, d := range append([]v1.Descriptor{img.manifest.Config}, img.manifest.Layers...) {
			if !seen[d.Digest] {
				seen[d.Digest] = true
				blobs = append(blobs, d)
			}
		}
	}
	return blobs, descs, nil
}

// resolve is the digest r's tag holds; a zero Hash when the repository has
// no such tag.
func resolve(ctx context.Context, r repository) (v1.Hash, error) {
	desc, err := r.repo.Resolve(ctx, r.tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return v1.Hash{}, nil
	}
	if err != nil {
		return v1.Hash{}, err
	}
	return v1.NewHash(desc.Digest.String())
}

// fetchManifest is the manifest r's repository holds at digest, as a
// layout-free artifact's root: its descriptor and bytes.
func fetchManifest(ctx context.Context, r repository, h v1.Hash) (v1.Descriptor, []byte, error) {
	mt, data, err := fetchVerified(ctx, r.repo.Manifests(), h)
	if err != nil {
		return v1.Descriptor{}, nil, err
	}
	return v1.Descriptor{MediaType: types.MediaType(mt), Size: int64(len(data)), Digest: h}, data, nil
}

// pushManifest writes a manifest's bytes under r's tag.
func pushManifest(ctx context.Context, r repository, d v1.Descriptor, data []byte) error {
	return r.repo.Manifests().PushReference(ctx, ociDescriptor(d), bytes.NewReader(data), r.tag)
}

// ociDescriptor is d as oras-go takes it.
func ociDescriptor(d v1.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: string(d.MediaType), Digest: digest.Digest(d.Digest.String()), Size: d.Size}
}

// untrustedCertificate is whether err is a TLS handshake's refusal of the
// server's certificate: the server speaks https.
func untrustedCertificate(err error) bool {
	var verify *tls.CertificateVerificationError
	return errors.As(err, &verify)
}

// registryErr says what a registry answered in the words of HTTP: the
// request, the status and what the registry said of it.
func registryErr(err error) error {
	var resp *errcode.ErrorResponse
	switch {
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("401 Unauthorized: the registry asks for a login, and none was given")
	case untrustedCertificate(err):
		// the way out first: a log line cuts the error's end
		return fmt.Errorf("its certificate is not trusted here: give the engine its CA (README, \"A registry signed by a private CA\"): %w", err)
	case errors.As(err, &resp):
		said := ""
		if len(resp.Errors) > 0 {
			said = ": " + resp.Errors.Error()
		}
		return fmt.Errorf("%s %s: %d %s%s", resp.Method, resp.URL.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode), said)
	}
	return err
}
