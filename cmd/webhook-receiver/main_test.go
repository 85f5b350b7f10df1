package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadToken(t *testing.T) {
	t.Setenv("WEBHOOK_TOKEN", "from-env")
	tok, err := readToken("")
	require.NoError(t, err)
	assert.Equal(t, "from-env", tok)

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	tok, err = readToken(file)
	require.NoError(t, err)
	assert.Equal(t, "from-file", tok, "a file's trailing newline is not part of the token")

	t.Setenv("WEBHOOK_TOKEN", "")
	_, err = readToken("")
	assert.EqualError(t, err, "no token: set WEBHOOK_TOKEN or -token-file")
}
