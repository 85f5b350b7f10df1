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
