package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/payload"
	"dagger/lowcode-pipeline/internal/rules"
)

// ApprovalMode gates a code-as-data deployment or a promotion behind an approval step
type ApprovalMode string

const (
	// Deploy or promote automatically
	ApprovalModeAuto ApprovalMode = "auto"
	// Wait for an approval step
	ApprovalModeManual ApprovalMode = "manual"
)

// PlanFormat is how a plan is printed
type PlanFormat string

const (
	// Aligned columns for a terminal
	PlanFormatTable PlanFormat = "table"
	// JSON for scripts
	PlanFormatJSON PlanFormat = "json"
)

// Build the deployment payload and print it as JSON, validated
//
// Starts from the reference default (catch-all deploy rule, both approval
// modes manual) or from a payload you give, then sets the frontend image,
// appends the backend images and sets the code-as-data image when one was built.
func (m *LowcodePipeline) Payload(
	ctx context.Context,
	// Frontend image reference
	// +optional
	frontendImage string,
	// Backend image reference (repeatable)
	// +optional
	backendImage []string,
	// Code-as-data image reference: only when this run built one
	// +optional
	codeAsDataImage string,
	// Deploy rule "SOURCE -> TARGET", JavaScript regular expressions matching image references and backend names (repeatable; replaces the starting rules)
	// +optional
	deployRule []string,
	// codeAsData.updateMode
	// +optional
	updateMode ApprovalMode,
	// noDowntime.promotionMode
	// +optional
	promotionMode ApprovalMode,
	// Set skipUpdateVersions: skip the orchestrator and toolkit update (only for dedicated snapshot versions)
	// +optional
	skipUpdateVersions bool,
	// Add --force-sync to extraArgs: force the code as data to be synchronised
	// +optional
	forceSync bool,
	// Payload JSON file to start from instead of the reference default
	// +optional
	from *dagger.File,
	// Payload JSON text to start from instead of the reference default
	// +optional
	fromJson string,
) (string, error) {
	var base []byte
	if from != nil || fromJson != "" {
		var err error
		if base, err = readInput(ctx, "--from", from, fromJson); err != nil {
			return "", err
		}
	}
	p, err := buildPayload(base, payloadFlags{
		frontendImage: frontendImage, backendImages: backendImage, codeAsDataImage: codeAsDataImage,
		deployRules: deployRule, updateMode: string(updateMode), promotionMode: string(promotionMode),
		skipUpdateVersions: skipUpdateVersions, forceSync: forceSync,
	})
	if err != nil {
		return "", err
	}
	out, err := p.Marshal()
	return string(out), err
}

// Validate a deployment payload against every rule of the interface; fails with all problems listed
func (m *LowcodePipeline) ValidatePayload(
	ctx context.Context,
	// Payload JSON file
	// +optional
	payload *dagger.File,
	// Payload JSON text (instead of a file)
	// +optional
	payloadJson string,
) (string, error) {
	data, err := readInput(ctx, "--payload", payload, payloadJson)
	if err != nil {
		return "", err
	}
	return validatePayload(data)
}

// Show which image each backend receives and through which rules; fails on conflicts and images that reach no backend
func (m *LowcodePipeline) Plan(
	ctx context.Context,
	// Names of the instance's backends
	backends []string,
	// Payload JSON file
	// +optional
	payload *dagger.File,
	// Payload JSON text (instead of a file)
	// +optional
	payloadJson string,
	// Output format: table (the default) or json
	// +optional
	format PlanFormat,
) (string, error) {
	data, err := readInput(ctx, "--payload", payload, payloadJson)
	if err != nil {
		return "", err
	}
	return planPayload(data, backends, format)
}

// readInput takes JSON from exactly one of a file and an inline text.
func readInput(ctx context.Context, flag string, file *dagger.File, inline string) ([]byte, error) {
	switch {
	case file != nil && inline != "":
		return nil, fmt.Errorf("give %s or %s-json, not both", flag, flag)
	case file != nil:
		s, err := file.Contents(ctx)
		return []byte(s), err
	case inline != "":
		return []byte(inline), nil
	}
	return nil, fmt.Errorf("no payload: give %s FILE or %s-json 'JSON'", flag, flag)
}

type payloadFlags struct {
	frontendImage, codeAsDataImage, updateMode, promotionMode string
	backendImages, deployRules                                []string
	skipUpdateVersions, forceSync                             bool
}

func buildPayload(base []byte, f payloadFlags) (*payload.Payload, error) {
	start, opts, err := payloadOptions(base, f)
	if err != nil {
		return nil, err
	}
	return finishPayload(start, opts)
}

// payloadOptions checks the flags and the starting payload, all problems at
// once, before anything is built; start is nil for the reference default.
func payloadOptions(base []byte, f payloadFlags) (*payload.Payload, payload.Options, error) {
	opts := payload.Options{
		FrontendImage: f.frontendImage, BackendImages: f.backendImages, CodeAsDataImage: f.codeAsDataImage,
		ForceSync: f.forceSync,
	}
	var errs []error
	var err error
	if opts.UpdateMode, err = payload.ParseMode("--update-mode", f.updateMode); err != nil {
		errs = append(errs, err)
	}
	if opts.PromotionMode, err = payload.ParseMode("--promotion-mode", f.promotionMode); err != nil {
		errs = append(errs, err)
	}
	for _, s := range f.deployRules {
		r, err := rules.ParseFlag(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--deploy-rule: %w", err))
		}
		opts.DeployRules = append(opts.DeployRules, r)
	}
	if _, ruleErrs := rules.CompileRules("--deploy-rule", opts.DeployRules, 0); len(ruleErrs) > 0 && len(errs) == 0 {
		errs = append(errs, ruleErrs)
	}
	if f.skipUpdateVersions {
		opts.SkipUpdateVersions = &f.skipUpdateVersions
	}
	var start *payload.Payload
	if base != nil {
		if start, err = payload.Parse(base); err != nil {
			errs = append(errs, fmt.Errorf("starting payload: %w", err))
		}
	}
	return start, opts, errors.Join(errs...)
}

// finishPayload applies the options to the starting payload and validates the result.
func finishPayload(start *payload.Payload, opts payload.Options) (*payload.Payload, error) {
	var p *payload.Payload
	if start == nil {
		p = payload.FromDefault(opts)
	} else {
		p = payload.Build(start, opts)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("the built payload is invalid: %w", err)
	}
	return p, nil
}

func validatePayload(data []byte) (string, error) {
	p, err := payload.Parse(data)
	if err != nil {
		return "", fmt.Errorf("invalid payload: %w", err)
	}
	return "valid payload: " + p.Summary(), nil
}

func planPayload(data []byte, backends []string, format PlanFormat) (string, error) {
	p, err := payload.Parse(data)
	if err != nil {
		return "", fmt.Errorf("invalid payload: %w", err)
	}
	in := rules.Input{Backends: backends}
	if p.Backends != nil {
		in.Images, in.Rules = p.Backends.Images, p.Backends.DeployRules
	}
	plan, err := rules.Build(in)
	if err != nil {
		return "", err
	}
	var out string
	switch format {
	case PlanFormatJSON:
		data, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return "", err
		}
		out = string(data) + "\n"
	case PlanFormatTable, "":
		out = plan.Table()
	default:
		return "", fmt.Errorf("--format: invalid value %q: allowed values are %q and %q", format, PlanFormatTable, PlanFormatJSON)
	}
	if !plan.OK() {
		return "", fmt.Errorf("%w:\n%s", rules.ErrPlan, out)
	}
	return out, nil
}
