package ocipublish

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The digests normalize gives fixed images, as the module gave them before
// it used one OCI library (main at 6e49df4 gave these): a change of library
// or of code must not move them, or every runner's digests move with it.
func TestNormalizedDigestsStayWhatTheyWere(t *testing.T) {
	arm := v1.Platform{OS: "linux", Architecture: "arm64"}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), amd64), Descriptor: v1.Descriptor{Platform: &amd64}},
		mutate.IndexAddendum{Add: build(t, commit.Add(time.Hour), arm), Descriptor: v1.Descriptor{Platform: &arm}})
	base := baseImage(t, amd64)
	pulled, anew := remadeBase(t)
	own := layer(t, commit.Add(3600e9), map[string]string{"app/server.mjs": "listen()"})
	for _, tc := range []struct {
		name string
		prep func() Prepare
		want string
	}{
		{"one image", func() Prepare {
			return Prepare{Tarball: layoutTarball(t, build(t, commit.Add(time.Hour), amd64))}
		}, "sha256:f83a29a26248a62c7f4d03cb36b1a74a3c1c8574f8f8d4b99d69f908e8a1253e"},
		{"two platforms", func() Prepare {
			return Prepare{Tarball: layoutTarball(t, idx), Platforms: []string{"linux/amd64", "linux/arm64"}}
		}, "sha256:241b6d1990bfbd60cd79ce44fd918d79118aa87c3159cb35d2bdb88b2b9a4685"},
		{"on a base read from the engine's export", func() Prepare {
			return Prepare{Tarball: layoutTarball(t, onBase(t, base, commit.Add(96*time.Hour))), BaseTarball: layoutTarball(t, base)}
		}, "sha256:6fe96bb23664d1d9c1755f0455bfdb81fa4e02f80070d027a55cf47634c75d71"},
		{"on a base first exported, remade by a restarted engine", func() Prepare {
			v := Cache{Dir: t.TempDir()}
			ref := firstExported(t, imageOf(t, pulled), v)
			return Prepare{Tarball: layoutTarball(t, imageOf(t, anew, own)), BaseTarball: layoutTarball(t, imageOf(t, anew)), BaseRef: ref, Cache: v.Dir}
		}, "sha256:185d4f401ae96209114ddb318ed5d6c8e405ed949e981830fcae64a33eb5a514"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.prep()
			p.Kind, p.Created = "backend", commit
			out := filepath.Join(t.TempDir(), "out")
			require.NoError(t, Normalized(p, t.TempDir(), out, io.Discard))
			got, err := loadBack(t, out)
			require.NoError(t, err)
			assert.Equal(t, tc.want, digestOf(t, got))
		})
	}
}
