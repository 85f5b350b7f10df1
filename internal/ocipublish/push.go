package ocipublish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/redact"
	"dagger/lowcode-pipeline/internal/secret"
)

// Request is the push, the step run on every publish.
type Request struct {
	// Kind names the image in messages.
	Kind string `json:"kind"`
	// Refs are registry/repository:tag, all of one repository, canonical
	// (images.Target.Refs); the first is pushed, the others tagged.
	Refs []string `json:"refs"`
	// Connect is where a registry run as a Dagger service is reached, in
	// plain http; the refs, and so the result, keep their names.
	Connect string `json:"connect,omitempty"`
	// Username logs in with the environment's password; none: anonymous.
	Username string `json:"username,omitempty"`
	// Timeout bounds the whole push (a Go duration).
	Timeout string `json:"timeout"`
}

// Result is what was pushed, as oci-publish push prints it.
type Result struct {
	Digest string   `json:"digest"`
	Pushed []Pushed `json:"pushed"`
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
	OutcomeTagged    = "tagged"    // the tag was pointed at an image the repository held already
	OutcomeUnchanged = "unchanged" // the tag held the image already
)

// target is a Request parsed once: each ref as named and as reached.
type target struct {
	Request
	named   []name.Tag
	reached []name.Tag
	login   bool
	scrub   redact.Scrubber
	ctx     context.Context
	opts    []remote.Option
}

// parse checks r, naming the field of any problem; cancel ends its time limit.
func (r Request) parse(ctx context.Context, password secret.Text) (_ *target, cancel context.CancelFunc, _ error) {
	limit, err := time.ParseDuration(r.Timeout)
	if err != nil || limit <= 0 {
		return nil, nil, fmt.Errorf("timeout %s: use a positive Go duration", fielderr.Quote(r.Timeout))
	}
	if len(r.Refs) == 0 {
		return nil, nil, errors.New("refs: no reference to push to")
	}
	t := &target{Request: r, login: password.Set(), scrub: redact.NewScrubber(password)}
	for i, ref := range r.Refs {
		tag, err := name.NewTag(ref, name.StrictValidation)
		if err != nil {
			return nil, nil, fmt.Errorf("refs[%d] %s: %s", i, fielderr.Quote(ref), fielderr.Cut(fielderr.Printable(fielderr.WithoutLogins(err.Error())), 200))
		}
		if i > 0 && tag.Context() != t.named[0].Context() {
			return nil, nil, fmt.Errorf("refs[%d] %s: not the repository of refs[0]", i, fielderr.Quote(ref))
		}
		reached := tag
		if r.Connect != "" {
			if reached, err = name.NewTag(r.Connect+"/"+tag.RepositoryStr()+":"+tag.TagStr(), name.Insecure); err != nil {
				return nil, nil, fmt.Errorf("connect %s: %s", fielderr.Quote(r.Connect), fielderr.Cut(fielderr.Printable(fielderr.WithoutLogins(err.Error())), 200))
			}
		}
		t.named, t.reached = append(t.named, tag), append(t.reached, reached)
	}
	auth := authn.Anonymous
	if password.Set() {
		auth = authn.FromConfig(authn.AuthConfig{Username: r.Username, Password: password.Reveal()})
	}
	t.ctx, cancel = context.WithTimeoutCause(ctx, limit, fmt.Errorf("the push did not finish within %s", limit))
	t.opts = []remote.Option{remote.WithContext(t.ctx), remote.WithAuth(auth), remote.WithJobs(4),
		remote.WithTransport(boundedAnswers{RoundTripper: remote.DefaultTransport})}
	return t, cancel, nil
}

// Push brings the image of the layout in dir (Normalized's) to every ref of
// r, only where a tag lacks it (PlanPush), and reads every tag back.
func Push(ctx context.Context, r Request, password secret.Text, dir string, log io.Writer) (Result, error) {
	t, cancel, err := r.parse(ctx, password)
	if err != nil {
		return Result{}, err
	}
	defer cancel()
	root, digest, err := layoutRoot(dir)
	if err != nil {
		return Result{}, err
	}
	if notes, err := os.ReadFile(filepath.Join(dir, notesFile)); err == nil {
		for line := range strings.Lines(fielderr.Cut(string(notes), 4000)) {
			fmt.Fprintln(log, fielderr.Printable(strings.TrimSuffix(line, "\n")))
		}
	}
	held, readErr := t.tagged()
	plan := PlanPush(t.Kind, digest, r.Refs, held, readErr)
	fmt.Fprintln(log, plan.Why)
	switch {
	case plan.Push:
		err = t.push(root)
	case len(plan.Retag) > 0:
		err = t.put(root, plan.Retag)
	}
	if err == nil {
		err = t.readBack(digest)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Digest: digest.String()}
	for _, ref := range r.Refs {
		outcome := OutcomeUnchanged
		if plan.Push {
			outcome = OutcomePushed
		} else if slices.Contains(plan.Retag, ref) {
			outcome = OutcomeTagged
		}
		res.Pushed = append(res.Pushed, Pushed{Ref: ref + "@" + digest.String(), Digest: digest.String(), Outcome: outcome})
	}
	return res, nil
}

// layoutRoot is what the layout in dir names first (Load), and its digest.
func layoutRoot(dir string) (remote.Taggable, v1.Hash, error) {
	a, err := Load(dir)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	if a.root.MediaType.IsIndex() {
		ii, err := a.index.ImageIndex(a.root.Digest)
		return ii, a.root.Digest, err
	}
	img, err := a.index.Image(a.root.Digest)
	return img, a.root.Digest, err
}

// tagged is the digest each tag holds (a HEAD each); zero for none.
func (t *target) tagged() ([]v1.Hash, error) {
	held := make([]v1.Hash, len(t.reached))
	var g errgroup.Group
	for i, tag := range t.reached {
		g.Go(func() error {
			d, err := remote.Head(tag, t.opts...)
			var terr *transport.Error
			switch {
			case errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound:
			case err != nil:
				return t.wrap("read "+t.named[i].String(), err)
			default:
				held[i] = d.Digest
			}
			return nil
		})
	}
	return held, g.Wait()
}

// push writes the image under the first ref, then tags the others.
func (t *target) push(r remote.Taggable) error {
	if err := remote.Push(t.reached[0], r, t.opts...); err != nil {
		return t.wrap("push "+t.Refs[0], err)
	}
	return t.put(r, t.Refs[1:])
}

// put writes the manifest under refs: the repository holds what it names.
func (t *target) put(r remote.Taggable, refs []string) error {
	var g errgroup.Group
	for _, ref := range refs {
		i := slices.Index(t.Refs, ref)
		g.Go(func() error { return t.wrap("tag "+ref, remote.Put(t.reached[i], r, t.opts...)) })
	}
	return g.Wait()
}

// readBack checks that every tag holds digest.
func (t *target) readBack(digest v1.Hash) error {
	held, err := t.tagged()
	if err != nil {
		return err
	}
	for i, h := range held {
		if h != digest {
			return fmt.Errorf("read back: %s, not the %s pushed", holding(t.named[i].String(), h), digest)
		}
	}
	return nil
}

// What is read of a registry's answers, which go-containerregistry reads
// whole: an error's body is cut at errorBodyLimit (wrap scrubs less of it:
// errorTextRead), any other answer over answerLimit fails. A push reads
// manifests (at most 4 MiB in the distribution registry) and tokens, never
// a blob.
const (
	errorBodyLimit = 64 << 10
	errorTextRead  = 8 << 10
	answerLimit    = 8 << 20
)

// boundedAnswers bounds every answer's body: errorBodyLimit, answerLimit.
type boundedAnswers struct{ http.RoundTripper }

func (b boundedAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.RoundTripper.RoundTrip(r)
	switch {
	case err != nil:
	case resp.StatusCode >= http.StatusBadRequest:
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, errorBodyLimit), resp.Body}
	default:
		resp.Body = &overLimit{resp.Body, answerLimit}
	}
	return resp, err
}

var errOverLimit = fmt.Errorf("the registry's answer is over %d MiB, more than a manifest or a token", answerLimit>>20)

// overLimit fails a read once more than left bytes came.
type overLimit struct {
	io.ReadCloser
	left int64
}

func (o *overLimit) Read(p []byte) (int, error) {
	if o.left < 0 {
		return 0, errOverLimit
	}
	n, err := o.ReadCloser.Read(p[:min(int64(len(p)), o.left+1)])
	if o.left -= int64(n); o.left < 0 {
		err = errOverLimit
	}
	return n, err
}

// wrap says what failed in words the registry cannot forge first (the time
// limit, the login's flags, the CA), then the registry's, scrubbed of the
// password in any spelling, printable, cut.
func (t *target) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var terr *transport.Error
	var verify *tls.CertificateVerificationError
	said, _ := t.scrub.ScrubAtMost(err.Error(), errorTextRead)
	said = fielderr.Cut(fielderr.Printable(said), 300)
	switch {
	case errors.As(err, &verify):
		said = "its certificate is not trusted here: give the engine its CA (README, \"A registry signed by a private CA\"): " + said
	case errors.As(err, &terr) && terr.StatusCode == http.StatusUnauthorized && t.login:
		said = "the registry refused the login of --registry-username " + fielderr.Quote(t.Username) + " with --registry-password: " + said
	case errors.As(err, &terr) && terr.StatusCode == http.StatusUnauthorized:
		said = "the registry asks for a login, and none was given: " + said
	}
	if cause := context.Cause(t.ctx); cause != nil && t.ctx.Err() != nil {
		said = cause.Error() + " (" + said + ")"
	}
	return fmt.Errorf("%s: %s", what, said)
}

// Plan is what publishing an artifact comes to, from what its tags hold.
type Plan struct {
	// Push: the repository is not known to hold the artifact: push it.
	Push bool
	// Retag are refs to point at the artifact another ref holds: a registry
	// takes a manifest only once it has what it names.
	Retag []string
	// Why says which, in a line for the log.
	Why string
}

// PlanPush decides how the image of digest reaches refs from what they
// hold (tagged); when they could not be read, a push.
func PlanPush(kind string, digest v1.Hash, refs []string, held []v1.Hash, err error) Plan {
	switch {
	case err != nil:
	case len(refs) == 0:
		err = errors.New("no reference")
	case len(held) != len(refs):
		err = fmt.Errorf("%d tags read of %d", len(held), len(refs))
	case digest == (v1.Hash{}):
		err = errors.New("the image's digest is not known") // a missing tag's zero Hash must not match it
	}
	if err != nil {
		return Plan{Push: true, Why: fmt.Sprintf("the %s image: pushing (%v)", kind, err)}
	}
	holder, retag := -1, []string(nil)
	for i, h := range held {
		switch {
		case h != digest:
			retag = append(retag, refs[i])
		case holder < 0:
			holder = i
		}
	}
	switch {
	case holder < 0:
		return Plan{Push: true, Why: fmt.Sprintf("the %s image: pushing (%s, not %s)", kind, holding(refs[0], held[0]), digest)}
	case len(retag) == 0:
		return Plan{Why: fmt.Sprintf("the %s image: every tag already holds %s; nothing to push", kind, digest)}
	}
	more := ""
	if len(retag) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(retag)-1)
	}
	return Plan{Retag: retag, Why: fmt.Sprintf("the %s image: %s already holds %s; pointing %s%s at it, nothing to push",
		kind, refs[holder], digest, retag[0], more)}
}

// holding says what a ref holds, for a log line.
func holding(ref string, held v1.Hash) string {
	if held == (v1.Hash{}) {
		return ref + " is not in the registry"
	}
	return ref + " holds " + held.String()
}

// ConnectAddress is a registry service bound as alias: the alias with the
// registry's port, if it has one.
func ConnectAddress(registry, alias string) string {
	if i := strings.LastIndex(registry, ":"); i >= 0 && !strings.Contains(registry[i:], "]") {
		return alias + registry[i:]
	}
	return alias
}
