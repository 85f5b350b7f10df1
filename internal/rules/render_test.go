package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// P2 (issue #65): --backend names are the user's; the table a terminal
// shows escapes what would clear the line, colour it, reverse it or break
// its columns, and what a terminal draws as nothing.
func TestPlanTableIsPrintable(t *testing.T) {
	name := "api\x1b[2K\u202e\tx"
	p, err := Build(Input{Images: []string{imgA}, Rules: []Rule{{".*", "^api"}, {"zz\u3164", ".*"}}, Backends: []string{name, "b\u009bc"}})
	require.NoError(t, err)
	table := p.Table()
	for _, line := range strings.Split(table, "\n") {
		assert.Equal(t, fielderr.Printable(line), line)
	}
	assert.Regexp(t, `(?m)^api\\x1b\[2K\\u202e\\tx\s+`+regexpQuote(imgA)+`\s+0$`, table, "the name escaped, in its column")
	assert.Regexp(t, `(?m)^b\\u009bc\s+-\s+-$`, table)
	assert.Contains(t, table, `zz\u3164`, "a warning repeating a pattern is escaped")
}
