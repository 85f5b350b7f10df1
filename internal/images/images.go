// Package images holds the decisions about the three container images: their
// Dockerfiles and SOURCES_PATH, their labels, and the registry names, tags
// and platforms they are published under.
package images

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
	"dagger/lowcode-pipeline/internal/loopback"
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

// LabelDrawVersion is the label the reference pipelines attach.
const LabelDrawVersion = "draw_version"

// ErrNoDrawVersion is an image asked for of a project that names no design
// tool: no --draw-package, and no nodebuild.DrawPackage in package.json.
var ErrNoDrawVersion = errors.New("draw_version is unknown: package.json does not depend on " + nodebuild.DrawPackage +
	", the design tool that builds the project: add it, or set --draw-package to the package that does")

// LabelSet is --created and --label, checked (ParseLabels): every label of
// an image but draw_version, known after the install.
type LabelSet [][2]string

// ParseLabels checks --label KEY=VALUE, all problems at once, and adds
// org.opencontainers.image.created from created (none when zero). Labels are
// public, so a value that is a URL is shown as internal/redact shows
// addresses (no user-info, query or fragment: GitLab's $CI_REPOSITORY_URL
// holds a token). No label holds the time of the build: the same sources
// give the same image digest.
func ParseLabels(created time.Time, given []string) (LabelSet, error) {
	labels := LabelSet{}
	if !created.IsZero() {
		labels = append(labels, [2]string{LabelCreated, created.UTC().Format(time.RFC3339)})
	}
	var errs []error
	seen := map[string]bool{LabelDrawVersion: true, LabelCreated: true}
	for i, l := range given {
		key, value, ok := strings.Cut(l, "=")
		flag := fmt.Sprintf("--label[%d] %s", i, fielderr.Quote(l))
		switch {
		case !ok || !labelKey.match(key):
			errs = append(errs, fmt.Errorf("%s: want KEY=VALUE, the key of letters, digits, '.', '-' and '_', e.g. org.opencontainers.image.revision=$GIT_SHA", flag))
		case key == LabelDrawVersion:
			errs = append(errs, fmt.Errorf("%s: draw_version is the installed version of --draw-package, not set by hand", flag))
		case key == LabelCreated:
			errs = append(errs, fmt.Errorf("%s: set the creation time with --created, which every time in the image is clamped to", flag))
		case seen[key]:
			errs = append(errs, fmt.Errorf("%s: %s is given twice", flag, key))
		case len(value) > maxLabelValue:
			errs = append(errs, fmt.Errorf("%s: a value of at most %d bytes", flag, maxLabelValue))
		case !strings.Contains(value, "://") && fielderr.HoldsLogin(value):
			errs = append(errs, fmt.Errorf("%s: the value of %s holds a login (user:password@host), which a label would publish: write the address without it", flag, key))
		default:
			shown, ok := shownValue(value)
			if !ok {
				errs = append(errs, fmt.Errorf("--label[%d] %s: the value holds an address that is not one URL, so what is secret in it cannot be found; labels are public", i, key))
				continue
			}
			seen[key] = true
			labels = append(labels, [2]string{key, shown})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return labels, nil
}

// With is every label of an image whose design tool is drawVersion:
// draw_version first.
func (s LabelSet) With(drawVersion string) [][2]string {
	return append([][2]string{{LabelDrawVersion, drawVersion}}, s...)
}

// LabelCreated is the OCI creation-time label, set from --created.
const LabelCreated = "org.opencontainers.image.created"

const maxLabelValue = 4096

// bounded is a pattern with its length checked apart: a counted repetition
// ({0,127}) compiles into as many copies, at every start of the module
// (BenchmarkTheModuleBinaryStarts).
type bounded struct {
	max int
	re  *regexp.Regexp
}

func (b bounded) match(s string) bool { return len(s) <= b.max && b.re.MatchString(s) }

// labelKey: up to 128 letters, digits, '.', '-' and '_', starting with a
// letter or digit.
var labelKey = bounded{128, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)}

// shownValue is a label value as it may be public: a URL without what
// redact hides. A value with an address that is not one URL cannot be shown.
func shownValue(v string) (string, bool) {
	if !strings.Contains(v, "://") {
		return v, true
	}
	return redact.URL(v)
}

// tagPattern is an OCI tag: up to 128 letters, digits, '_', '.' and '-',
// not starting with '.' or '-'.
var tagPattern = bounded{128, regexp.MustCompile(`^[\w][\w.-]*$`)}

// Target is where one image is published: registry/repository under tags.
type Target struct {
	Kind       Kind
	Repository string // registry/repository, no tag, as --repository names it
	Registry   string // the repository's registry host (and port), as named
	Name       imageref.Ref
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

// UnknownDigest stands for a digest not known before the push.
const UnknownDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// Placeholder is the reference a payload will carry for the image, pinned
// to UnknownDigest: what a payload can be checked with before the build.
func (t Target) Placeholder() string {
	if len(t.Tags) == 0 {
		return ""
	}
	return t.Repository + ":" + t.Tags[0] + "@" + UnknownDigest
}

// Placeholders are the references a payload will carry for the targets,
// by kind (Target.Placeholder).
func Placeholders(targets []Target) map[Kind]string {
	refs := make(map[Kind]string, len(targets))
	for _, t := range targets {
		refs[t.Kind] = t.Placeholder()
	}
	return refs
}

// KindPlaceholder in --repository stands for each image's kind.
const KindPlaceholder = "{kind}"

// PublishRequest is what `publish` is asked to do.
type PublishRequest struct {
	// Repository is registry/path with {kind}, e.g. registry.example.com/team/app-{kind}.
	Repository string
	// The code-as-data image is published exactly when the code as data was
	// built, so a CI passes one --repository and lets --code-as-data decide.
	HasCodeAsData bool
	Tags          []string
	Platforms     []string
	Username      string
	HasPassword   bool
	// HasService: the registry runs as a Dagger service (--registry-service),
	// which the push reaches whatever the repository's host.
	HasService bool
}

// Targets validates the request, all problems at once, before anything is
// built, and returns one target per image kind.
func (r PublishRequest) Targets() ([]Target, error) {
	var errs []error
	if len(r.Tags) == 0 {
		errs = append(errs, errors.New("--tag: at least one tag, e.g. the version or the commit"))
	}
	for _, tag := range r.Tags {
		if !tagPattern.match(tag) {
			errs = append(errs, fmt.Errorf("--tag: %s is not a valid tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", fielderr.Quote(tag)))
		}
	}
	if _, err := ParsePlatforms(r.Platforms); err != nil {
		errs = append(errs, err)
	}
	if r.HasPassword && r.Username == "" {
		errs = append(errs, errors.New("--registry-password needs --registry-username: registries authenticate the pair"))
	}
	if strings.Contains(r.Username, ":") {
		// user:password typed into the flag: not shown, and no Basic login
		// can carry a user name with a colon
		errs = append(errs, errors.New("--registry-username holds a ':' (not shown: the part after it may be a password): give the user name alone, and the password with --registry-password (a secret)"))
	}
	kinds := []Kind{Frontend, Backend}
	if r.HasCodeAsData {
		kinds = append(kinds, CodeAsData)
	}
	var targets []Target
	switch {
	case r.Repository == "":
		errs = append(errs, errors.New("--repository: required: where the images go, with {kind} for frontend, backend and codeasdata, e.g. registry.example.com/team/app-{kind}"))
	case fielderr.HoldsLogin(r.Repository):
		errs = append(errs, fmt.Errorf("--repository %s holds a login (user:password@): give it with --registry-username and --registry-password (a secret), and the repository alone, e.g. registry.example.com/team/app-{kind}",
			fielderr.Quote(r.Repository)))
	case !strings.Contains(r.Repository, KindPlaceholder):
		errs = append(errs, fmt.Errorf("--repository %s: put {kind} where frontend, backend and codeasdata go, e.g. %s-{kind}: the three images need three names",
			fielderr.Quote(r.Repository), fielderr.Cut(fielderr.Printable(r.Repository), 80)))
	default:
		for _, k := range kinds {
			full := strings.ReplaceAll(r.Repository, KindPlaceholder, string(k))
			named, err := imageref.Parse(full)
			var problem error
			switch {
			case errors.Is(err, imageref.ErrRegistry):
				// "a_b.c/x": a push would have no registry to go to
				host, _, _ := strings.Cut(full, "/")
				problem = fmt.Errorf("--repository %s: %s is not a registry host: a host name (letters, digits, '-' and '.') or IP address, with an optional :port, e.g. registry.example.com/team/app-{kind}",
					fielderr.Quote(r.Repository), fielderr.Quote(host))
			case err == nil && !named.Whole():
				err = errors.New("name the registry and the whole repository (docker.io/library/x, not x)")
				fallthrough
			case err != nil:
				problem = fmt.Errorf("--repository %s: %s is not a repository name with its registry (registry.example.com/team/app-{kind}: lower-case path components of letters, digits and separators): %v",
					fielderr.Quote(r.Repository), fielderr.Quote(full), err)
			case named.Tag() != "" || named.Digest() != "":
				problem = fmt.Errorf("--repository %s: give the name only; tags go in --tag", fielderr.Quote(r.Repository))
			case !r.HasService && loopback.Host(named.Host()):
				problem = fmt.Errorf("--repository %s: %s names this machine, but the push runs in a container of the engine, whose loopback has no registry: "+
					"run the registry as a Dagger service and pass it with --registry-service (as demo does), or name it by a host or IP address the engine reaches",
					fielderr.Quote(r.Repository), fielderr.Quote(named.Host()))
			}
			if problem != nil {
				errs = append(errs, problem)
				break // one message, not one per name
			}
			targets = append(targets, Target{Kind: k, Repository: full, Registry: named.Host(), Name: named, Tags: r.Tags})
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
			return nil, fmt.Errorf("--platform %s: not supported: choose from %s", fielderr.Quote(p), strings.Join(SupportedPlatforms, ", "))
		}
		if seen[p] {
			return nil, fmt.Errorf("--platform %s: listed twice", fielderr.Quote(p))
		}
		seen[p] = true
	}
	return ps, nil
}
