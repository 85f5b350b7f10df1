package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/ocipublish"
	"dagger/lowcode-pipeline/internal/results"
)

// What oci-publish reports is taken only as the target's own references,
// in its order, each pinned by the digest pushed: the strings the module
// gave, not a parse of what came back.
func TestPushedImagesAreTheTargetsRefsPinned(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	target := images.Target{Kind: images.Backend, Repository: "registry.example.com/team/app-backend", Registry: "registry.example.com", Tags: []string{"1.4.0", "latest"}}
	pinned := func(ref, outcome string) ocipublish.Pushed {
		return ocipublish.Pushed{Ref: ref + "@" + digest, Digest: digest, Outcome: outcome}
	}
	got, err := pushedImages(target, []ocipublish.Pushed{pinned(target.Refs()[0], "tagged"), pinned(target.Refs()[1], "unchanged")})
	require.NoError(t, err)
	assert.Equal(t, []results.PushedImage{
		{Ref: "registry.example.com/team/app-backend:1.4.0@" + digest, Repository: target.Repository, Tag: "1.4.0", Digest: digest, Outcome: "tagged"},
		{Ref: "registry.example.com/team/app-backend:latest@" + digest, Repository: target.Repository, Tag: "latest", Digest: digest, Outcome: "unchanged"},
	}, got)

	for _, tc := range []struct {
		name   string
		pushed []ocipublish.Pushed
		err    string
	}{
		{"a tag missing", []ocipublish.Pushed{pinned(target.Refs()[0], "pushed")}, "1 references pushed of 2"},
		{"the tags in another order", []ocipublish.Pushed{pinned(target.Refs()[1], "pushed"), pinned(target.Refs()[0], "pushed")}, "not registry.example.com/team/app-backend:1.4.0"},
		{"another repository", []ocipublish.Pushed{pinned("registry.example.com/other:1.4.0", "pushed"), pinned(target.Refs()[1], "pushed")}, `pushed "registry.example.com/other:1.4.0@sha256:`},
		{"no digest", []ocipublish.Pushed{{Ref: target.Refs()[0] + "@", Outcome: "pushed"}, pinned(target.Refs()[1], "pushed")}, "digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pushedImages(target, tc.pushed)
			assert.ErrorContains(t, err, tc.err)
		})
	}
}
