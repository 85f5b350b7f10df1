package payload

import (
	"fmt"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
	"dagger/lowcode-pipeline/internal/rules"
)

// validate checks the spec's rules, skipping the paths in bad that already
// failed to decode; a template may leave frontend.image for the build-up.
// Parse checks what it reads with it, Start.Compose what it builds.
func validate(p *Payload, bad map[string]bool, template bool) fielderr.List {
	var errs fielderr.List
	if bad[""] {
		return errs
	}
	if b := p.Backends; b != nil && !bad["backends"] {
		switch {
		case b.Images == nil && !bad["backends.images"]:
			errs.Addf("backends.images", "required when backends is present: the backend image references to deploy (may be [])")
		case b.Images != nil:
			for i, ref := range b.Images {
				checkImage(&errs, bad, fielderr.Index("backends.images", i), ref)
			}
		}
		const rule, catchAll = `{"source": <image regex>, "target": <backend regex>}`, `[{"source": ".*", "target": ".*"}]`
		switch {
		case bad["backends.deployRules"]:
		case b.DeployRules == nil && b.Images != nil:
			errs.Addf("backends.deployRules", "required when backends.images is present: rules %s, e.g. %s", rule, catchAll)
		case len(b.DeployRules) == 0 && len(b.Images) > 0:
			errs.Addf("backends.deployRules", "[] while backends.images holds %d image(s): each would reach no backend; give at least one rule %s, e.g. %s", len(b.Images), rule, catchAll)
		default:
			checkRules(&errs, bad, b.DeployRules)
		}
	}
	if c := p.CodeAsData; c != nil && !bad["codeAsData"] {
		if c.Image != "" || bad["codeAsData.image"] {
			checkImage(&errs, bad, "codeAsData.image", c.Image)
		}
		checkMode(&errs, bad, "codeAsData.updateMode", c.UpdateMode)
	}
	if f := p.Frontend; f != nil && !bad["frontend"] && !bad["frontend.image"] {
		if f.Image == "" && !template {
			errs.Addf("frontend.image", "required when frontend is present: the frontend image reference to deploy")
		} else if f.Image != "" {
			checkImage(&errs, bad, "frontend.image", f.Image)
		}
	}
	if n := p.NoDowntime; n != nil && !bad["noDowntime"] {
		if n.PromotionMode == "" && !bad["noDowntime.promotionMode"] {
			errs.Addf("noDowntime.promotionMode", "required when noDowntime is present: %q or %q", ModeAuto, ModeManual)
		}
		checkMode(&errs, bad, "noDowntime.promotionMode", n.PromotionMode)
	}
	for i, a := range p.ExtraArgs {
		path := fielderr.Index("extraArgs", i)
		if !bad[path] && a != ForceSync {
			errs.Addf(path, "unsupported argument %s: the only accepted value is %q", fielderr.Quote(a), ForceSync)
		}
	}
	return errs
}

func checkImage(errs *fielderr.List, bad map[string]bool, path, ref string) {
	if bad[path] {
		return
	}
	if err := imageref.ValidateDeployable(ref); err != nil {
		errs.Addf(path, "%s: %v", fielderr.Quote(ref), err)
	}
}

func checkMode(errs *fielderr.List, bad map[string]bool, path string, m Mode) {
	switch {
	case bad[path], m == "", m == ModeAuto, m == ModeManual:
	default:
		errs.Addf(path, "invalid value %s: allowed values are %q and %q", fielderr.Quote(string(m)), ModeAuto, ModeManual)
	}
}

func checkRules(errs *fielderr.List, bad map[string]bool, rs []rules.Rule) {
	_, ruleErrs := rules.CompileRules("backends.deployRules", rs)
	for _, e := range ruleErrs {
		if !bad[e.Path] {
			*errs = append(*errs, e)
		}
	}
}

// ParseMode reads an approval mode from a flag; empty means "leave as is".
func ParseMode(flag, s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeAuto, ModeManual:
		return m, nil
	}
	return "", fmt.Errorf("%s: invalid value %s: allowed values are %q and %q", flag, fielderr.Quote(s), ModeAuto, ModeManual)
}
