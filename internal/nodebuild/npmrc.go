package nodebuild

import (
	"bytes"
	"strings"
)

// ProjectNpmrc is the project's .npmrc as the module's containers get it:
// every setting that names an environment variable (`${NPM_TOKEN}`, in its
// value or its key) is left out. A CI sets such a variable for npm; the
// module's containers never have it, and npm would send the reference
// itself as the token, overriding the one the --npmrc secret gives. Left
// out, --npmrc supplies it. Comments, other settings and line endings are
// kept as they are.
func ProjectNpmrc(data []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		text := strings.TrimSpace(string(line))
		if !strings.HasPrefix(text, "#") && !strings.HasPrefix(text, ";") && strings.Contains(text, "${") {
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}
