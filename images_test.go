package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/secret"
)

// loopbackRegistry is go-containerregistry's registry on 127.0.0.1: its host.
func loopbackRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// outsideRegistry names the registry of the targets below: publish refuses
// a loopback name without a registry service (in the engine, loopback is the
// push's own container), so the targets are made for this name, then moved to
// the loopback registry that stands in for it (onHost).
const outsideRegistry = "registry.example.com"

// onHost is targets with their registry, outsideRegistry, replaced by host.
func onHost(targets []images.Target, host string) []images.Target {
	for i := range targets {
		targets[i].Repository = host + strings.TrimPrefix(targets[i].Repository, outsideRegistry)
	}
	return targets
}

func TestTagCheckReadsEveryTagOfTheTargetAndNeverAServicesRegistry(t *testing.T) {
	host := loopbackRegistry(t)
	targets, err := images.PublishRequest{Repository: outsideRegistry + "/team/app-{kind}", Tags: []string{"1.4.0", "latest"}}.Targets()
	require.NoError(t, err)
	targets = onHost(targets, host)
	frontend := targets[0]
	img, err := random.Image(512, 2)
	require.NoError(t, err)
	for _, ref := range frontend.Refs() {
		tag, err := name.NewTag(ref)
		require.NoError(t, err)
		require.NoError(t, remote.Write(tag, img))
	}
	want, err := img.Digest()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := <-tagCheck(ctx, frontend, "", nil, nil)
	require.NoError(t, read.err)
	assert.Equal(t, []v1.Hash{want, want}, read.held, "every tag of the frontend's repository holds the image")
	assert.Equal(t, frontend.Refs(), read.target.Refs, "what a retag would write to")
	read = <-tagCheck(ctx, targets[1], "", nil, nil)
	require.NoError(t, read.err)
	assert.Equal(t, []v1.Hash{{}, {}}, read.held, "neither of the backend's tags is there")

	assert.Nil(t, tagCheck(ctx, frontend, "", nil, &dagger.Service{}), "a registry service is always pushed to")
}

func TestDeliverReadsTheTagsOfEveryImageItWillPush(t *testing.T) {
	host := loopbackRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := goodDelivery()
	c.repository, c.tag = outsideRegistry+"/team/app-{kind}", []string{"1.4.0"}
	for _, tc := range []struct {
		name  string
		edit  func(*deliveryCheck)
		kinds []images.Kind
	}{
		{"no code as data", func(*deliveryCheck) {}, []images.Kind{images.Frontend, images.Backend}},
		{"with code as data", func(c *deliveryCheck) { c.codeAsData, c.toolkit = CodeAsDataKindProject, "@vendor/cli" }, images.Kinds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			tc.edit(&c)
			targets, err := c.check(secret.New(testToken), nil, nil)
			require.NoError(t, err)
			targets = onHost(targets, host)
			checks := readTags(ctx, targets, c.registryUsername, nil, nil)
			require.Len(t, checks, len(tc.kinds))
			for _, kind := range tc.kinds {
				require.Contains(t, checks, kind)
				read := <-checks[kind]
				require.NoError(t, read.err)
				assert.Equal(t, []string{host + "/team/app-" + string(kind) + ":1.4.0"}, read.target.Refs)
				assert.Equal(t, []v1.Hash{{}}, read.held, "not in the registry")
			}
			assert.Empty(t, readTags(ctx, targets, c.registryUsername, nil, &dagger.Service{}), "a registry service is always pushed to")
		})
	}
}

func TestWithoutPushRetagsWhatTheRegistryHoldsAndElsePushes(t *testing.T) {
	host := loopbackRegistry(t)
	targets, err := images.PublishRequest{Repository: outsideRegistry + "/team/app-{kind}", Tags: []string{"1.5.0", "latest"}}.Targets()
	require.NoError(t, err)
	backend := onHost(targets, host)[1]
	img, err := random.Image(512, 2)
	require.NoError(t, err)
	latest, err := name.NewTag(backend.Refs()[1])
	require.NoError(t, err)
	require.NoError(t, remote.Write(latest, img), "the image is in the registry under latest only")
	digest, err := img.Digest()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var log strings.Builder
	refs, err := withoutPush(ctx, images.Backend, digest, <-tagCheck(ctx, backend, "", nil, nil), &log)
	require.NoError(t, err)
	require.Len(t, refs, 2, "no container to push: both tags reported")
	for i, ref := range refs {
		assert.Equal(t, backend.Refs()[i]+"@"+digest.String(), ref.Ref)
	}
	assert.Equal(t, []string{"tagged", "unchanged"}, []string{refs[0].Outcome, refs[1].Outcome})
	assert.Contains(t, log.String(), "pointing "+backend.Refs()[0]+" at it, nothing to push")
	again := <-tagCheck(ctx, backend, "", nil, nil)
	assert.Equal(t, []v1.Hash{digest, digest}, again.held, "the new tag holds the image")

	log.Reset()
	refs, err = withoutPush(ctx, images.Backend, digest, again, &log)
	require.NoError(t, err)
	require.Len(t, refs, 2)
	assert.Equal(t, []string{"unchanged", "unchanged"}, []string{refs[0].Outcome, refs[1].Outcome})
	assert.Contains(t, log.String(), "every tag already holds "+digest.String()+"; nothing to push")

	other, err := random.Image(512, 1)
	require.NoError(t, err)
	changed, err := other.Digest()
	require.NoError(t, err)
	log.Reset()
	refs, err = withoutPush(ctx, images.Backend, changed, again, &log)
	require.NoError(t, err)
	assert.Nil(t, refs, "an image no tag holds is pushed")
	assert.Contains(t, log.String(), "the backend image: pushing (")

	// a read that says a tag holds the image while the registry does not
	// have it (another run deleted it since): the retag fails, so push
	log.Reset()
	stale := tagsRead{target: again.target, held: []v1.Hash{{}, changed}}
	refs, err = withoutPush(ctx, images.Backend, changed, stale, &log)
	require.NoError(t, err)
	assert.Nil(t, refs)
	assert.Contains(t, log.String(), "the backend image: pushing (the retag failed: read "+host+"/team/app-backend@"+changed.String())
}
