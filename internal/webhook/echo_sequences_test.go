package webhook

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/testsupport/leaktest"
)

// A receiver that echoes the token broken by a colour code, a tag, or
// percent-encoded twice in a redirect: no rendering of the error or the log
// shows a piece of it (#65, S1, S2).
func TestAnEchoedTokenBrokenBySequencesNothingDrawsIsNotShown(t *testing.T) {
	half := len(issued) / 2
	var twice strings.Builder
	for i := 0; i < len(issued); i++ {
		fmt.Fprintf(&twice, "%%25%02X", issued[i])
	}
	for name, answer := range map[string]func(w http.ResponseWriter){
		"a colour reset in a 401's body": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "401: bad token \x1b[31m"+issued[:half]+"\x1b[0m"+issued[half:]+"\x1b[0m")
		},
		"<wbr> in an HTML body": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "<p>bad token "+issued[:half]+"<wbr>"+issued[half:]+"</p>")
		},
		"a redirect percent-encoding it twice": func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://other.example/hook/"+twice.String())
			w.WriteHeader(http.StatusFound)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) { answer(w) })
			cfg := tlsConfig(srv)
			cfg.Token = secret.New(issued)
			leaks := &leaktest.Recorder{}
			_, err := send(t, cfg, leaks)
			assert.Error(t, err)
			leaks.AssertClean(t, pieces(issued)...)
			leaks.AssertClean(t, twice.String()[:30])
		})
	}
}
