module dagger/lowcode-pipeline/internal/devtools

go 1.26.1

require (
	dagger/lowcode-pipeline v0.0.0-00010101000000-000000000000
	github.com/bmatcuk/doublestar/v4 v4.10.0
	github.com/google/go-containerregistry v0.21.2
	github.com/mattn/go-shellwords v1.0.12
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.11.1
	github.com/vektah/gqlparser/v2 v2.5.32
	golang.org/x/mod v0.34.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/agnivade/levenshtein v1.2.1 // indirect
	github.com/containerd/stargz-snapshotter/estargz v0.18.2 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/vbatts/tar-split v0.12.2 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)

replace dagger/lowcode-pipeline => ../..
