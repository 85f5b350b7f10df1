package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ship checks what it can before building or pushing anything; these calls
// fail before the first engine call (the test binary has no engine).
func TestShipRefusesBadInputBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tags, rules []string
		updateMode  ApprovalMode
		want        []string
	}{
		{"a bad tag", []string{"v 1"}, nil, "", []string{`--tags: "v 1" is not a valid tag`}},
		{"a bad deploy rule", []string{"1.0"}, []string{"(?i)api -> .*"}, "", []string{"--deploy-rule[0].source", "inline flags"}},
		{"a bad mode and a rule without arrow", []string{"1.0"}, []string{"api"}, "soon", []string{`--update-mode: invalid value "soon"`, "want exactly one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Ship(context.Background(), "registry.example.com", "team/front", "team/api", tc.tags,
				"https://hooks.example.com/acme/prod", nil, "", nil, false, "", false, nil, "", tc.rules, tc.updateMode, "", false, false, nil,
				false, "10s", "60s", 3)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
