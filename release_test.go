package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/registrytest"
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
		registrytest.Write(t, ref, img)
	}
	want, err := img.Digest()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := <-registryAccess{}.checkTags(ctx, frontend)
	require.NoError(t, read.Err)
	assert.Equal(t, []v1.Hash{want, want}, read.Held, "every tag of the frontend's repository holds the image")
	assert.Equal(t, frontend.Refs(), read.Target.Refs, "what a retag would write to")
	read = <-registryAccess{}.checkTags(ctx, targets[1])
	require.NoError(t, read.Err)
	assert.Equal(t, []v1.Hash{{}, {}}, read.Held, "neither of the backend's tags is there")

	assert.Nil(t, registryAccess{service: &dagger.Service{}}.checkTags(ctx, frontend), "a registry service is always pushed to")
}

func TestDeliverReadsTheTagsOfEveryImageItWillPush(t *testing.T) {
	host := loopbackRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := goodDelivery()
	c.publish.repository, c.publish.tag, c.publish.registryPassword = outsideRegistry+"/team/app-{kind}", []string{"1.4.0"}, nil
	for _, tc := range []struct {
		name  string
		edit  func(*deliveryFlags)
		kinds []images.Kind
	}{
		{"no code as data", func(*deliveryFlags) {}, []images.Kind{images.Frontend, images.Backend}},
		{"with code as data", func(c *deliveryFlags) { c.build.codeAsData, c.build.toolkit = CodeAsDataKindProject, "@vendor/cli" }, images.Kinds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			tc.edit(&c)
			spec, err := checkDelivery(c, projectOf(t, plainManifest, c), secret.New(testToken), nil, nil)
			require.NoError(t, err)
			spec.publish.targets = onHost(spec.publish.targets, host)
			checks := spec.publish.readTags(ctx)
			require.Len(t, checks, len(tc.kinds))
			for _, kind := range tc.kinds {
				require.Contains(t, checks, kind)
				read := <-checks[kind]
				require.NoError(t, read.Err)
				assert.Equal(t, []string{host + "/team/app-" + string(kind) + ":1.4.0"}, read.Target.Refs)
				assert.Equal(t, []v1.Hash{{}}, read.Held, "not in the registry")
			}
			spec.publish.access.service = &dagger.Service{}
			assert.Empty(t, spec.publish.readTags(ctx), "a registry service is always pushed to")
		})
	}
}
