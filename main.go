// A low-code platform's whole delivery as container-native steps
//
// Snapshot code as data into git, build the project in node:24 containers,
// package the frontend, backend and code-as-data images, and deploy them with
// one webhook call: the same pipeline from any CI and from a laptop. A CI run
// is one call, deliver; the same steps chain one by one, each returning an
// object whose fields are its result and whose functions are the next steps:
// build → publish → payload → deploy, and snapshot → push.
package main

// LowcodePipeline is the module: it holds nothing, so that a call costs one module function call and no constructor
//
// Every step takes what it uses (the project is --source, the current
// directory by default).
type LowcodePipeline struct{}

// CodeAsDataKind says whether and how build makes dist/codeAsData
type CodeAsDataKind string

const (
	// No code as data (the default)
	CodeAsDataKindNone CodeAsDataKind = "none"
	// The code as data as a final project, with its dependencies': buildCodeAsData --codeAsData.mode all
	CodeAsDataKindProject CodeAsDataKind = "project"
	// The code as data as a library of bricks, the project's own only: buildCodeAsData --codeAsData.mode project
	CodeAsDataKindBricks CodeAsDataKind = "bricks"
)

// ApprovalMode gates a code-as-data deployment or a promotion behind an approval step
type ApprovalMode string

const (
	// Deploy or promote automatically
	ApprovalModeAuto ApprovalMode = "auto"
	// Wait for an approval step
	ApprovalModeManual ApprovalMode = "manual"
)
