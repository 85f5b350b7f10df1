// Package commands holds the programs the module runs inside containers
// (oci-publish, snapshot-push, webhook-receiver). They are not built on
// their own: the module's binary is each of them when installed under its
// name (see internal/busybox); to run one locally, build the module and link
// it under that name.
package commands

import (
	"context"
	"io"
	"maps"
	"slices"
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
	return slices.Sorted(maps.Keys(All))
}
