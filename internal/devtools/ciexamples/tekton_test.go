package ciexamples

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tekton is tekton.yml's objects by kind and name.
type tekton map[string]map[string]map[string]any

func readTekton(t *testing.T) tekton {
	t.Helper()
	out := tekton{}
	for _, doc := range yamlDocuments(t, read(t, "tekton.yml")) {
		kind, _ := doc["kind"].(string)
		name, _ := dig(doc, "metadata", "name").(string)
		require.NotEmpty(t, kind)
		require.NotEmpty(t, name, "every %s has a name", kind)
		if out[kind] == nil {
			out[kind] = map[string]map[string]any{}
		}
		require.NotContains(t, out[kind], name, "one %s named %s", kind, name)
		out[kind][name] = doc
	}
	return out
}

// dig follows keys through nested maps; nil where one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func list(v any) []map[string]any {
	var out []map[string]any
	items, _ := v.([]any)
	for _, i := range items {
		if m, ok := i.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// pipelineTask is one task of a Pipeline: the Task it runs, the tasks it
// runs after, its workspaces (name → pipeline workspace and subPath).
type pipelineTask struct {
	taskRef    string
	runAfter   []string
	workspaces map[string]string
}

func pipelineTasks(p map[string]any) map[string]pipelineTask {
	out := map[string]pipelineTask{}
	for _, task := range list(dig(p, "spec", "tasks")) {
		pt := pipelineTask{workspaces: map[string]string{}}
		pt.taskRef, _ = dig(task, "taskRef", "name").(string)
		after, _ := task["runAfter"].([]any)
		for _, a := range after {
			pt.runAfter = append(pt.runAfter, a.(string))
		}
		for _, w := range list(task["workspaces"]) {
			pt.workspaces[w["name"].(string)] = fmt.Sprint(w["workspace"], "/", w["subPath"])
		}
		out[task["name"].(string)] = pt
	}
	return out
}

// before: whether task a runs, by runAfter, before task b.
func before(tasks map[string]pipelineTask, a, b string) bool {
	for _, p := range tasks[b].runAfter {
		if p == a || before(tasks, a, p) {
			return true
		}
	}
	return false
}

// Each Pipeline waits for its turn, clones, then calls dagger in the clone:
// a Pipeline whose workspace nothing fills runs dagger on an empty folder.
func TestTektonPipelinesCloneBeforeTheyCallDagger(t *testing.T) {
	objs := readTekton(t)
	clone := objs["Task"]["lowcode-pipeline-clone"]
	require.NotNil(t, clone, "the clone Task is in the file: no catalog or resolver needed")
	script := dig(list(dig(clone, "spec", "steps"))[0], "script").(string)
	assert.Regexp(t, `\bfetch\b.* origin "\$REVISION"`, script, "the clone Task fetches the project at the run's revision")
	assert.Contains(t, script, `"$GIT_URL"`, "from the site's GIT_URL")
	assert.Contains(t, script, "http.extraHeader", "the token goes in a header, never in the URL or .git/config")

	require.Len(t, objs["Pipeline"], 2)
	for name, p := range objs["Pipeline"] {
		t.Run(name, func(t *testing.T) {
			tasks := pipelineTasks(p)
			var gate, cloning, calling string
			for task, pt := range tasks {
				require.Contains(t, objs["Task"], pt.taskRef, "%s runs a Task of this file", task)
				switch pt.taskRef {
				case "lowcode-pipeline-wait-turn":
					gate = task
				case "lowcode-pipeline-clone":
					cloning = task
				case "lowcode-pipeline":
					calling = task
				}
			}
			require.NotEmpty(t, gate, "a task waits for the older runs")
			require.NotEmpty(t, cloning, "a task clones")
			require.NotEmpty(t, calling, "a task calls dagger")
			assert.True(t, before(tasks, cloning, calling), "%s clones before %s calls dagger", cloning, calling)
			for task := range tasks {
				if task != gate {
					assert.True(t, before(tasks, gate, task), "%s runs after %s", task, gate)
				}
			}
			assert.Equal(t, tasks[cloning].workspaces["source"], tasks[calling].workspaces["source"], "dagger runs where the clone went")
		})
	}
}

// Runs never overlap: the gate lists its Pipeline's runs, which the runs'
// ServiceAccount may read.
func TestTektonRunsWaitForTheOlderOnes(t *testing.T) {
	objs := readTekton(t)
	gate := objs["Task"]["lowcode-pipeline-wait-turn"]
	require.NotNil(t, gate)
	script := dig(list(dig(gate, "spec", "steps"))[0], "script").(string)
	assert.Contains(t, script, "/pipelineruns?labelSelector=tekton.dev%2Fpipeline%3D$PIPELINE", "it reads its Pipeline's runs")
	assert.Contains(t, script, ".status.completionTime == null", "it waits for the unfinished ones")
	for name, p := range objs["Pipeline"] {
		for _, task := range list(dig(p, "spec", "tasks")) {
			if dig(task, "taskRef", "name") != "lowcode-pipeline-wait-turn" {
				continue
			}
			params := map[string]any{}
			for _, p := range list(task["params"]) {
				params[p["name"].(string)] = p["value"]
			}
			assert.Equal(t, map[string]any{"pipeline": "$(context.pipeline.name)", "pipelinerun": "$(context.pipelineRun.name)"}, params, name)
		}
	}
	assert.True(t, allowed(objs, "lowcode-pipeline-runner", "pipelineruns", "list"), "the runs' ServiceAccount may list PipelineRuns")
}

// allowed: whether a ServiceAccount of the file is bound to a Role of the
// file that allows verb on resource.
func allowed(objs tekton, account, resource, verb string) bool {
	if objs["ServiceAccount"][account] == nil {
		return false
	}
	for _, b := range objs["RoleBinding"] {
		bound := slices.ContainsFunc(list(b["subjects"]), func(s map[string]any) bool {
			return s["kind"] == "ServiceAccount" && s["name"] == account
		})
		role := objs["Role"][fmt.Sprint(dig(b, "roleRef", "name"))]
		if !bound || dig(b, "roleRef", "kind") != "Role" || role == nil {
			continue
		}
		for _, r := range list(role["rules"]) {
			resources, _ := r["resources"].([]any)
			verbs, _ := r["verbs"].([]any)
			if slices.Contains(resources, any(resource)) && slices.Contains(verbs, any(verb)) {
				return true
			}
		}
	}
	return false
}

// The CronJob starts a Pipeline of the file, as a ServiceAccount that may,
// with the runs' ServiceAccount, and mounts only what the file provides.
func TestTektonCronJobStartsTheSnapshotWithWhatTheFileProvides(t *testing.T) {
	objs := readTekton(t)
	cron := objs["CronJob"]["lowcode-pipeline-snapshot"]
	require.NotNil(t, cron)
	pod := dig(cron, "spec", "jobTemplate", "spec", "template", "spec")
	account := fmt.Sprint(dig(pod, "serviceAccountName"))
	assert.True(t, allowed(objs, account, "pipelineruns", "create"), "%s may create PipelineRuns", account)
	assert.True(t, allowed(objs, account, "pipelines", "get"), "%s may read the Pipeline it starts", account)

	volumes := map[string]string{} // volume → ConfigMap
	for _, v := range list(dig(pod, "volumes")) {
		cm, _ := dig(v, "configMap", "name").(string)
		require.Contains(t, objs["ConfigMap"], cm, "volume %s is a ConfigMap of the file", v["name"])
		volumes[v["name"].(string)] = cm
	}
	containers := list(dig(pod, "containers"))
	require.Len(t, containers, 1)
	var args []string
	for _, a := range containers[0]["command"].([]any) {
		args = append(args, a.(string))
	}
	require.GreaterOrEqual(t, len(args), 4)
	assert.Equal(t, []string{"tkn", "pipeline", "start"}, args[:3])
	assert.Contains(t, objs["Pipeline"], args[3], "it starts a Pipeline of the file")
	i := slices.Index(args, "--serviceaccount")
	require.Positive(t, i, "the runs get a ServiceAccount")
	assert.Equal(t, "lowcode-pipeline-runner", args[i+1])

	mounts := map[string]string{} // mount path → ConfigMap
	for _, m := range list(containers[0]["volumeMounts"]) {
		mounts[m["mountPath"].(string)] = volumes[m["name"].(string)]
	}
	files := 0
	for _, a := range args {
		for _, field := range strings.Split(a, ",") {
			_, file, ok := strings.Cut(field, "File=")
			if !ok {
				continue
			}
			files++
			cm := objs["ConfigMap"][mounts[path.Dir(file)]]
			require.NotNil(t, cm, "%s is in a mounted ConfigMap", file)
			assert.Contains(t, cm["data"], path.Base(file), "the ConfigMap holds %s", file)
		}
	}
	assert.Equal(t, 1, files, "the workspace's volume claim template")
}
