package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/busybox"
)

func TestTheBinaryAnswersToEveryCommandAndNoOther(t *testing.T) {
	assert.Equal(t, busybox.Tools, Names(), "internal/busybox.Tools and commands.All name the same commands")
	for _, name := range Names() {
		assert.Equal(t, name, busybox.Tool("/usr/local/bin/"+name))
	}
}
