package images

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"

	"dagger/lowcode-pipeline/internal/imageref"
)

// Settings are a project's image settings, from the constructor.
type Settings struct {
	FrontendBaseImage string // the vendor's frontend base image at tag stable
	WebUser           string // the web server's user, owner of the files
	DocumentRoot      string // where the web server serves files from
	NodeImage         string // the image the project is built in
	BackendBaseImage  string // the backend's runtime; default derived from NodeImage
}

// BuildArgs are the image's build arguments beyond SOURCES_PATH, checked:
// base images must name one version (a tag, a digest, or both), the
// document root an absolute path.
func (s Settings) BuildArgs(k Kind) (map[string]string, error) {
	args := map[string]string{}
	var errs []error
	image := func(flag, name, value string) {
		if value == "" {
			return
		}
		if err := imageref.ValidateDeployable(value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, value, err))
			return
		}
		args[name] = value
	}
	switch k {
	case Frontend:
		image("--frontend-base-image", "BASE_IMAGE", s.FrontendBaseImage)
		if s.WebUser != "" {
			if strings.ContainsAny(s.WebUser, " :\t\n") {
				errs = append(errs, fmt.Errorf("--web-user %q: one user name or id, without a group (the group is root)", s.WebUser))
			}
			args["WEB_USER"] = s.WebUser
		}
		if s.DocumentRoot != "" {
			if !path.IsAbs(s.DocumentRoot) || path.Clean(s.DocumentRoot) == "/" {
				errs = append(errs, fmt.Errorf("--document-root %q: an absolute folder other than /", s.DocumentRoot))
			}
			args["DOCUMENT_ROOT"] = path.Clean(s.DocumentRoot)
		}
	case Backend:
		base := s.BackendBaseImage
		flag := "--backend-base-image"
		if base == "" {
			base, flag = BackendBase(s.NodeImage), "--node-image"
		}
		image(flag, "NODE_IMAGE", base)
	}
	return args, errors.Join(errs...)
}

// BackendBase is the backend's runtime for a project built in nodeImage:
// the same C library, so that native addons built there run. The official
// node image's Debian tags get their -slim variant; Alpine and slim tags,
// digests and other images are used as they are.
func BackendBase(nodeImage string) string {
	if nodeImage == "" {
		nodeImage = "node:24"
	}
	named, err := reference.ParseNormalizedNamed(nodeImage)
	if err != nil || reference.FamiliarName(named) != "node" {
		return nodeImage
	}
	if _, digested := named.(reference.Digested); digested {
		return nodeImage
	}
	tagged, ok := named.(reference.Tagged)
	if !ok {
		return nodeImage + ":slim"
	}
	tag := tagged.Tag()
	if strings.Contains(tag, "alpine") || strings.Contains(tag, "slim") {
		return nodeImage
	}
	return strings.TrimSuffix(nodeImage, ":"+tag) + ":" + tag + "-slim"
}

// ParseCreated reads --created: an RFC 3339 time (git log -1 --format=%cI)
// or Unix seconds ($SOURCE_DATE_EPOCH).
func ParseCreated(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs >= 0 {
		return time.Unix(secs, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--created %q: give the commit time as RFC 3339 (git log -1 --format=%%cI) or Unix seconds ($SOURCE_DATE_EPOCH)", s)
	}
	return t.UTC(), nil
}

// CheckNativeAddons refuses to put native addons (*.node files, built for
// the engine's platform) into a backend image of another platform.
func CheckNativeAddons(addons []string, engine string, platforms []string) error {
	if len(addons) == 0 {
		return nil
	}
	var foreign []string
	for _, p := range platforms {
		if p != "" && p != engine {
			foreign = append(foreign, p)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	shown := addons
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(addons)-5))
	}
	return fmt.Errorf("dist/node holds native addons built for %s (%s); they would not run in the backend image for %s: publish for %s only, or bundle the backend without native addons",
		engine, strings.Join(shown, ", "), strings.Join(foreign, ", "), engine)
}

// CheckPlatforms compares the platforms an image has with those asked for,
// before it is pushed, and names what is missing or more. Variants a
// platform is written with or without (linux/arm64/v8, linux/amd64/v1) match.
func CheckPlatforms(image string, asked, have []string) error {
	var problems []string
	seen := map[string]bool{}
	for _, h := range have {
		seen[canonicalPlatform(h)] = true
	}
	want := map[string]bool{}
	for _, p := range asked {
		want[canonicalPlatform(p)] = true
		if !seen[canonicalPlatform(p)] {
			problems = append(problems, p+" is missing")
		}
	}
	for _, h := range have {
		if !want[canonicalPlatform(h)] {
			problems = append(problems, h+" was not asked for")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the %s image has %s, asked %s: %s; check that every base image exists for each --platform; nothing was pushed",
			image, orNone(strings.Join(have, ", ")), strings.Join(asked, ", "), strings.Join(problems, "; "))
	}
	return nil
}

// canonicalPlatform drops the variant a platform is the same without.
func canonicalPlatform(p string) string {
	switch p {
	case "linux/arm64/v8":
		return "linux/arm64"
	case "linux/amd64/v1":
		return "linux/amd64"
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
