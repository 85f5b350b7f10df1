// Package busybox makes the module's own binary its tools, as busybox is
// many commands: installed in a container as /usr/local/bin/oci-publish (or
// snapshot-push, webhook-receiver), the binary runs that command instead of
// serving the engine. The engine has already built the binary to load the
// module, so no container of the module pulls a Go toolchain or compiles
// anything, and an unchanged module gives the same file, so the execs that
// use it stay cached.
//
// The package must be initialised before the generated client package
// (internal/dagger), whose init panics without a Dagger session: it imports
// only standard packages that one imports too, and its path sorts before it,
// which is what Go's initialisation order needs. A test runs the built module
// as each tool with no session to hold this.
package busybox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Tools are the names the binary answers to as a command (internal/commands
// holds one command per name; a test keeps the two lists equal).
var Tools = []string{"oci-publish", "snapshot-push", "webhook-receiver"}

// The generated client reads these when the program starts: a tool never
// connects, so it gets values that parse and name no session.
var placeholders = map[string]string{"DAGGER_SESSION_PORT": "0", "DAGGER_SESSION_TOKEN": "none"}

var called string

func init() {
	called = Tool(os.Args[0])
	if called == "" {
		return
	}
	for name, value := range placeholders {
		if _, ok := os.LookupEnv(name); !ok {
			os.Setenv(name, value)
		}
	}
}

// Tool is the command a program started as argv0 runs, or "" for none.
func Tool(argv0 string) string {
	if name := filepath.Base(argv0); slices.Contains(Tools, name) {
		return name
	}
	return ""
}

// Called is the command this program was started as, or "" when it is the
// module. It unsets the placeholders init set, so the command's own child
// processes (git) do not see them.
func Called() string {
	if called != "" {
		for name, value := range placeholders {
			if os.Getenv(name) == value {
				os.Unsetenv(name)
			}
		}
	}
	return called
}

// InstallPath is where Install puts the binary, relative to its folder.
const InstallPath = ".lowcode-pipeline/lowcode-pipeline"

var install struct {
	once sync.Once
	err  error
}

// Install copies the running binary to InstallPath under dir, once per
// process (every later call returns the first one's result), so the module
// can hand it to the engine as a file.
func Install(dir string) error {
	install.once.Do(func() { install.err = copySelf(filepath.Join(dir, InstallPath)) })
	return install.err
}

func copySelf(dst string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("install the module's binary as its tools: %w", err)
		}
	}()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".install-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
