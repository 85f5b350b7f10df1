package main

import (
	"context"
	"fmt"
	"strings"
)

// The frontend image serves dist/web from the document root, owned by the web user with group root, labelled draw_version.
// +check
func (t *Tests) FrontendImageFollowsTheInterface(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			FrontendImage struct {
				Label    string
				WithExec struct{ Stdout string }
			}
		}
	}
	err := t.example(ctx, `frontendImage {
		label(name: "draw_version")
		withExec(args: ["sh", "-c", "stat -c '%U:%G %A' /usr/share/nginx/html/index.html"]) { stdout } }`, &out)
	if err != nil {
		return err
	}
	img := out.LowcodePipeline.FrontendImage
	if img.Label != "2.14.0" {
		return fmt.Errorf("draw_version label %q, want 2.14.0", img.Label)
	}
	if got := strings.TrimSpace(img.WithExec.Stdout); !strings.HasPrefix(got, "nginx:root -rw-r") {
		return fmt.Errorf("index.html is %q, want owned by nginx:root and group-readable", got)
	}
	return nil
}

// The backend image runs dist/node as a non-root user, and the code-as-data image holds dist/codeAsData at /codeasdata.
// +check
func (t *Tests) BackendAndCodeAsDataImages(ctx context.Context) error {
	var out struct {
		LowcodePipeline struct {
			BackendImage    struct{ User string }
			CodeAsDataImage struct {
				File struct{ Contents string }
			}
		}
	}
	err := t.example(ctx, `backendImage { user }
		codeAsDataImage { file(path: "/codeasdata/config/project.json") { contents } }`, &out)
	if err != nil {
		return err
	}
	if u := out.LowcodePipeline.BackendImage.User; u == "" || u == "root" || u == "0" {
		return fmt.Errorf("backend image user %q, want non-root", u)
	}
	if !strings.Contains(out.LowcodePipeline.CodeAsDataImage.File.Contents, `"kind": "project"`) {
		return fmt.Errorf("unexpected code-as-data config: %s", out.LowcodePipeline.CodeAsDataImage.File.Contents)
	}
	return nil
}

// publish refuses an invalid tag before building anything.
// +check
func (t *Tests) PublishRefusesAnInvalidTag(ctx context.Context) error {
	return t.exampleFails(ctx, `publish(registry: "registry.example.com", frontendRepository: "team/front",
		backendRepository: "team/api", tags: ["bad tag"])`, `--tags: "bad tag" is not a valid tag`)
}
