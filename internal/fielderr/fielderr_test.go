package fielderr

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestEchoedValuesAreCut(t *testing.T) {
	long := strings.Repeat("é", 1000)
	q := Quote(long)
	assert.True(t, utf8.ValidString(q))
	assert.Less(t, len(q), 200)
	assert.Contains(t, q, "… (2000 bytes)")
	assert.Equal(t, `"short"`, Quote("short"))

	c := Cut(strings.Repeat("x", 1<<20), MaxValue)
	assert.Equal(t, strings.Repeat("x", MaxValue)+"… (1048576 bytes)", c)
	assert.Equal(t, "ok", Cut("ok", MaxValue))
}

func TestListsAreCapped(t *testing.T) {
	var l List
	for i := range 100_000 {
		l.Addf(Index("extraArgs", i), "unsupported argument")
	}
	msg := l.Error()
	assert.True(t, strings.HasPrefix(msg, "100000 problems:\n  - extraArgs[0]: unsupported argument"))
	assert.Equal(t, MaxProblems+1, strings.Count(msg, "\n  "), "the first %d, then a count", MaxProblems)
	assert.True(t, strings.HasSuffix(msg, fmt.Sprintf("… and %d more", 100_000-MaxProblems)))
	assert.Less(t, len(msg), 4000)

	long := Error{Path: strings.Repeat("k", 1<<20), Message: "unknown key"}
	assert.Less(t, len(long.Error()), MaxPath+50, "a path is cut too: keys come from the input")
}

func TestToolLinesRepeatOnlyWhatOurToolsSaid(t *testing.T) {
	stderr := "npm ERR! //registry.example.com/:_authToken=npm_SECRET\n" +
		"lowcode-pipeline: node image node:18 has Node.js v18.20.4: the platform needs 20 or above\n" +
		"  lowcode-pipeline: indented, so not ours\n"
	assert.Equal(t, []string{"lowcode-pipeline: node image node:18 has Node.js v18.20.4: the platform needs 20 or above"}, ToolLines(stderr))
	assert.Empty(t, ToolLines("npm ERR! something else"))
	many := strings.Repeat("oci-publish: x\n", 9) + "snapshot-push: " + strings.Repeat("y", 5000)
	got := ToolLines(many)
	assert.Len(t, got, 6)
	assert.Equal(t, "(5 more lines in the log)", got[5])
}
