// Package images holds the decisions about the three container images: their
// Dockerfiles and SOURCES_PATH, their labels, and the registry names, tags
// and platforms they are published under.
package images

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"

	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/redact"
)

// Kind is one of the three images.
type Kind string

const (
	Frontend   Kind = "frontend"
	Backend    Kind = "backend"
	CodeAsData Kind = "codeasdata"
)

// Kinds in the order they are built and published.
var Kinds = []Kind{Frontend, Backend, CodeAsData}

// Dockerfile is the image's Dockerfile in the project's docker directory.
func (k Kind) Dockerfile() string { return "docker/" + string(k) + ".Dockerfile" }

// SourcesPath is the SOURCES_PATH build argument: the build output the image holds.
func (k Kind) SourcesPath() string {
	switch k {
	case Frontend:
		return nodebuild.WebDir
	case Backend:
		return nodebuild.NodeDir
	case CodeAsData:
		return nodebuild.CodeAsDataDir
	}
	panic(fmt.Sprintf("unknown image kind %q", string(k)))
}

// BuildArgs are the image's build arguments: SOURCES_PATH exactly as the
// spec says, then the user's, which may not override it.
func (k Kind) BuildArgs(extra map[string]string) ([][2]string, error) {
	args := [][2]string{{"SOURCES_PATH", k.SourcesPath()}}
	keys := make([]string, 0, len(extra))
	for name := range extra {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		if name == "SOURCES_PATH" {
			return nil, fmt.Errorf("build argument SOURCES_PATH is fixed by the interface (%s for the %s image)", k.SourcesPath(), k)
		}
		args = append(args, [2]string{name, extra[name]})
	}
	return args, nil
}

// LabelDrawVersion is the label the reference pipelines attach.
const LabelDrawVersion = "draw_version"

// Meta is what the labels describe; empty fields are left out.
type Meta struct {
	DrawVersion string
	SourceURL   string
	Revision    string
	Version     string
	Created     time.Time // from --created (the commit time), never the clock
}

// Labels computes the image labels: draw_version and the OCI annotations.
// Labels are public, so the source URL is shown as internal/redact shows
// addresses, and one that cannot be shown safely is left out with a warning.
// No label holds the time of the build unless given: the same sources give
// the same image digest.
func Labels(m Meta) (labels [][2]string, warnings []string, err error) {
	if m.DrawVersion == "" {
		return nil, nil, errors.New("draw_version is unknown: set --draw-package to the design-tool package that builds the project")
	}
	labels = [][2]string{{LabelDrawVersion, m.DrawVersion}}
	if m.SourceURL != "" {
		if shown, ok := redact.URL(m.SourceURL); ok {
			labels = append(labels, [2]string{"org.opencontainers.image.source", shown})
		} else {
			warnings = append(warnings, "--vcs-url is not an absolute URL: org.opencontainers.image.source is left out")
		}
	}
	if m.Revision != "" {
		labels = append(labels, [2]string{"org.opencontainers.image.revision", m.Revision})
	}
	if !m.Created.IsZero() {
		labels = append(labels, [2]string{"org.opencontainers.image.created", m.Created.UTC().Format(time.RFC3339)})
	}
	if m.Version != "" {
		labels = append(labels, [2]string{"org.opencontainers.image.version", m.Version})
	}
	return labels, warnings, nil
}

var tagPattern = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)

// Target is where one image is published: registry/repository under tags.
type Target struct {
	Kind       Kind
	Repository string // registry/repository, no tag
	Tags       []string
}

// Refs are the references the image is pushed to, one per tag.
func (t Target) Refs() []string {
	refs := make([]string, len(t.Tags))
	for i, tag := range t.Tags {
		refs[i] = t.Repository + ":" + tag
	}
	return refs
}

// PublishRequest is what `publish` is asked to do.
type PublishRequest struct {
	Registry     string
	Repositories map[Kind]string // repository names within the registry
	// The code-as-data image is published exactly when the code as data was
	// built (HasCodeAsData), under CodeAsDataRepository, so a CI can always
	// pass the repository and let --code-as-data decide.
	HasCodeAsData        bool
	CodeAsDataRepository string
	Tags                 []string
	Platforms            []string
	Username             string
	HasPassword          bool
	// The signing options of the supply chain, checked together.
	HasCosignKey, HasCosignPassword bool
}

// Targets validates the request, all problems at once, before anything is
// built, and returns one target per image kind asked for.
func (r PublishRequest) Targets() ([]Target, error) {
	var errs []error
	if r.Registry == "" {
		errs = append(errs, errors.New("--registry: required: the registry host, e.g. registry.example.com or localhost:5000"))
	} else if strings.Contains(r.Registry, "/") || strings.Contains(r.Registry, "://") {
		errs = append(errs, fmt.Errorf("--registry %q: want a host[:port] only (put the path in the repository names)", r.Registry))
	}
	if len(r.Tags) == 0 {
		errs = append(errs, errors.New("--tag: at least one tag, e.g. the version or the commit"))
	}
	for _, tag := range r.Tags {
		if !tagPattern.MatchString(tag) {
			errs = append(errs, fmt.Errorf("--tag: %q is not a valid tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", tag))
		}
	}
	if _, err := ParsePlatforms(r.Platforms); err != nil {
		errs = append(errs, err)
	}
	if r.HasPassword && r.Username == "" {
		errs = append(errs, errors.New("--registry-password needs --registry-username: registries authenticate the pair"))
	}
	if r.HasCosignPassword && !r.HasCosignKey {
		errs = append(errs, errors.New("--cosign-password needs --cosign-key: it is the key's password"))
	}
	repos := maps.Clone(r.Repositories)
	if r.HasCodeAsData {
		if r.CodeAsDataRepository == "" {
			errs = append(errs, errors.New("--code-as-data-repository: required, since the build has code as data (built with --code-as-data)"))
		} else {
			repos[CodeAsData] = r.CodeAsDataRepository
		}
	}
	var targets []Target
	for _, k := range Kinds {
		repo, ok := repos[k]
		if !ok {
			continue
		}
		full := r.Registry + "/" + repo
		named, err := reference.ParseNamed(full)
		switch {
		case repo == "":
			errs = append(errs, fmt.Errorf("%s repository: empty name", k))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s repository %q: not a valid repository name (lower-case path components of letters, digits and separators): %v", k, repo, err))
		case !reference.IsNameOnly(named):
			errs = append(errs, fmt.Errorf("%s repository %q: give the name only; tags go in --tag", k, repo))
		default:
			targets = append(targets, Target{Kind: k, Repository: full, Tags: r.Tags})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return targets, nil
}

// SupportedPlatforms are the platforms images can be published for.
var SupportedPlatforms = []string{"linux/amd64", "linux/arm64"}

// ParsePlatforms validates the requested platforms; none means the engine's own.
func ParsePlatforms(ps []string) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range ps {
		if !slices.Contains(SupportedPlatforms, p) {
			return nil, fmt.Errorf("--platform: %q is not supported: choose from %s", p, strings.Join(SupportedPlatforms, ", "))
		}
		if seen[p] {
			return nil, fmt.Errorf("--platform: %q is listed twice", p)
		}
		seen[p] = true
	}
	return ps, nil
}

// CheckPinned accepts what a push returned only when it names the image by
// digest: registry/repository:tag@sha256:…, which is what payloads carry.
func CheckPinned(ref string) error {
	parsed, err := reference.ParseNamed(ref)
	if err != nil {
		return fmt.Errorf("published reference %q: %w", ref, err)
	}
	if _, ok := parsed.(reference.Canonical); !ok {
		return fmt.Errorf("published reference %q is not pinned by digest", ref)
	}
	return nil
}

// Pinned is one pushed image under one tag, named by digest.
type Pinned struct {
	Ref        string // registry/repository:tag@sha256:…
	Repository string // registry/repository
	Tag        string
	Digest     string
}

// ParsePinned splits what a push returned; it must name the image by tag
// and digest, which is what payloads carry.
func ParsePinned(ref string) (Pinned, error) {
	if err := CheckPinned(ref); err != nil {
		return Pinned{}, err
	}
	named, _ := reference.ParseNamed(ref)
	p := Pinned{Ref: ref, Repository: named.Name(), Digest: named.(reference.Canonical).Digest().String()}
	if tagged, ok := named.(reference.Tagged); ok {
		p.Tag = tagged.Tag()
	}
	return p, nil
}
