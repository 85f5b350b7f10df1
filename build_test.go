package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestABadNodeImageFailsBeforeAnythingIsUploaded(t *testing.T) {
	// no engine here: the check must come before the first engine call (a nil
	// source would panic on it)
	_, err := (&LowcodePipeline{}).Install(context.Background(), nil, "Node:24", nil)
	assert.ErrorContains(t, err, `--node-image "Node:24": not an image reference`)
	_, err = (&LowcodePipeline{}).Build(context.Background(), nil, "", "", CodeAsDataKindNone, nil, nil, "node:24 ", nil)
	assert.ErrorContains(t, err, `--node-image "node:24 ": not an image reference`)
}
