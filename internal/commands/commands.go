// Package commands holds the programs the module runs inside containers
// (oci-publish, snapshot-push, webhook-receiver). They are not built on
// their own: the module's binary is each of them when installed under its
// name (see internal/busybox), and cmd/<name> builds one for local use.
package commands

import (
	"context"
	"io"
	"sort"
)

// A Command is a program: arguments and environment in, output written,
// exit code out.
type Command func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int

// All are the commands by the name a container calls them by.
var All = map[string]Command{
	"oci-publish":      OCIPublish,
	"snapshot-push":    SnapshotPush,
	"webhook-receiver": WebhookReceiver,
}

// Names are the commands' names, sorted.
func Names() []string {
	names := make([]string, 0, len(All))
	for n := range All {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
