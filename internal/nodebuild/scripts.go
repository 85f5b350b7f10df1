package nodebuild

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mattn/go-shellwords"
)

// installTimeScripts are the root package's scripts npm runs during an
// install (npm ci, and npm install without arguments), in npm's order.
var installTimeScripts = []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"}

// scriptNeeds is what the project's install-time scripts read of the
// project beyond package.json and the lock file: the root folders they need,
// or the whole project when a script is not one known to need less (npm
// runs it with the project's files, so the install must have them too).
// husky installs git hooks, and the module never uploads .git: it needs
// nothing. patch-package applies its patch folder.
func (m *Manifest) scriptNeeds(rootFiles []string) (dirs []string, whole bool) {
	for _, name := range installTimeScripts {
		script := m.Scripts[name]
		if strings.TrimSpace(script) == "" {
			continue
		}
		commands, ok := splitCommands(script)
		if !ok {
			return nil, true
		}
		for _, args := range commands {
			needs, known := commandNeeds(args)
			if !known {
				return nil, true
			}
			for _, dir := range needs {
				// a folder the project lacks is one the tool finds empty, as in a checkout
				if top, _, _ := strings.Cut(dir, "/"); hasRootEntry(rootFiles, top) {
					dirs = append(dirs, top)
				}
			}
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), false
}

// splitCommands splits a script at its shell operators (;, &&, ||, |) into
// the words of each command; false when it does not read as plain words
// (unbalanced quotes, a substitution).
func splitCommands(script string) ([][]string, bool) {
	var commands [][]string
	for rest := script; strings.TrimSpace(rest) != ""; {
		p := shellwords.NewParser()
		p.ParseEnv, p.ParseBacktick = false, false
		args, err := p.Parse(rest)
		if err != nil || strings.ContainsAny(strings.Join(args, " "), "$`(){}") {
			return nil, false
		}
		if len(args) > 0 {
			commands = append(commands, args)
		}
		if p.Position < 0 {
			break
		}
		// the parser stops at an operator; a stop that does not move on
		// (shellwords backs up before a redirection like 2>) is no plain script
		if p.Position > len(rest) {
			return nil, false
		}
		next := strings.TrimLeft(rest[p.Position:], ";&|<> \t\n")
		if len(next) >= len(rest) {
			return nil, false
		}
		rest = next
	}
	return commands, true
}

var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandNeeds is what one command of an install-time script reads of the
// project: known is false for a command not known to need less than all.
func commandNeeds(args []string) (dirs []string, known bool) {
	for len(args) > 0 && envAssignment.MatchString(args[0]) {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "npx" {
		args = args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return nil, true
	}
	switch args[0] {
	case "husky":
		return nil, true
	case "patch-package":
		dir := "patches"
		for i := 1; i < len(args); i++ {
			switch a := args[i]; {
			case a == "--patch-dir" && i+1 < len(args):
				i++
				dir = args[i]
			case strings.HasPrefix(a, "--patch-dir="):
				dir = strings.TrimPrefix(a, "--patch-dir=")
			case !strings.HasPrefix(a, "-"):
				return nil, false // a package name: making a patch, not applying them
			}
		}
		clean := path.Clean(dir)
		if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, false
		}
		return []string{clean}, true
	}
	return nil, false
}

// hasRootEntry says whether the project's root holds name (a folder is
// listed with a trailing /).
func hasRootEntry(rootFiles []string, name string) bool {
	return slices.ContainsFunc(rootFiles, func(e string) bool { return strings.TrimSuffix(e, "/") == name })
}
