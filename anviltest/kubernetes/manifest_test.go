package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/anvilbench/anvil/capacity/merge"
)

// decodeJob decodes a manifest strictly into a batch/v1 Job: an unknown or
// misspelled field, or a value of the wrong type, is an error. The strict
// decoder matches field names as encoding/json does, ignoring case, so a
// key spelled in another case is caught by encoding the Job again: every
// key of the manifest must come back exactly.
func decodeJob(t *testing.T, manifest []byte) (*batchv1.Job, error) {
	t.Helper()
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(manifest, &job); err != nil {
		return nil, err
	}
	var written, read any
	back, err := json.Marshal(&job)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(back, &written))
	asJSON, err := yaml.YAMLToJSON(manifest)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(asJSON, &read))
	if err := sameKeys("", read, written); err != nil {
		return nil, err
	}
	return &job, nil
}

// sameKeys reports the first key of the manifest read that the decoded Job,
// written back, does not have under that exact name.
func sameKeys(path string, read, written any) error {
	switch r := read.(type) {
	case map[string]any:
		w, _ := written.(map[string]any)
		for k, v := range r {
			wv, ok := w[k]
			if !ok {
				return fmt.Errorf("%s.%s: unknown field (not a field of batch/v1 Job by that exact name)", path, k)
			}
			if err := sameKeys(path+"."+k, v, wv); err != nil {
				return err
			}
		}
	case []any:
		w, _ := written.([]any)
		if len(w) != len(r) {
			return fmt.Errorf("%s: %d items read, %d decoded", path, len(r), len(w))
		}
		for i := range r {
			if err := sameKeys(fmt.Sprintf("%s[%d]", path, i), r[i], w[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// env returns the container's variable name, or nil.
func env(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// checkJob checks what the recipe promises of an Indexed Job of n shards
// starting at startAt.
func checkJob(t *testing.T, job *batchv1.Job, n int, startAt string) {
	t.Helper()
	require.Equal(t, "batch/v1", job.APIVersion)
	require.Equal(t, "Job", job.Kind)
	s := job.Spec
	require.NotNil(t, s.CompletionMode)
	require.Equal(t, batchv1.IndexedCompletion, *s.CompletionMode)
	require.Equal(t, int32(n), *s.Completions, "completions")
	require.Equal(t, int32(n), *s.Parallelism, "parallelism = completions")
	require.Equal(t, int32(0), *s.BackoffLimit, "a shard is never retried after the common start")
	pod := s.Template.Spec
	require.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)

	// Shards on different nodes: a required anti-affinity on the host
	// name, selecting the pods of this template.
	require.NotNil(t, pod.Affinity)
	require.NotNil(t, pod.Affinity.PodAntiAffinity)
	terms := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	require.Len(t, terms, 1)
	require.Equal(t, corev1.LabelHostname, terms[0].TopologyKey)
	for k, v := range terms[0].LabelSelector.MatchLabels {
		require.Equal(t, v, s.Template.Labels[k], "the anti-affinity selects the Job's own pods (%s)", k)
	}

	require.Len(t, pod.Containers, 1)
	c := &pod.Containers[0]
	require.Equal(t, strconv.Itoa(n), env(c, "ANVIL_SHARDS").Value)
	require.Equal(t, startAt, env(c, "ANVIL_START_AT").Value)
	_, err := time.Parse(time.RFC3339, startAt)
	require.NoError(t, err, "ANVIL_START_AT is RFC 3339")
	require.NotEmpty(t, env(c, "ANVIL_CLOCK_DOMAIN_ID").Value)
	idx := env(c, "JOB_COMPLETION_INDEX")
	require.Equal(t, "metadata.annotations['batch.kubernetes.io/job-completion-index']", idx.ValueFrom.FieldRef.FieldPath)

	// The target and the key from the Secret, never a literal.
	for _, name := range []string{"ANVIL_BASE_URL", "ANVIL_TARGET_API_KEY"} {
		v := env(c, name)
		require.NotNil(t, v, name)
		require.Empty(t, v.Value, "%s is not a literal", name)
		require.NotNil(t, v.ValueFrom.SecretKeyRef, "%s comes from a Secret", name)
		require.Equal(t, "anvil-target", v.ValueFrom.SecretKeyRef.Name)
	}
	require.Equal(t, "ANVIL_TARGET_API_KEY", env(c, "ANVIL_API_KEY_ENV").Value)

	// The artifact directory is on a mounted volume.
	out := env(c, "ANVIL_OUT").Value
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || strings.HasPrefix(out, m.MountPath+"/")
	}
	require.True(t, mounted, "ANVIL_OUT %s is under a volume mount", out)
}

// TestManifestDecodesStrictly: job.yaml is a batch/v1 Indexed Job of 4
// shards with everything the recipe says, and the strict decoding this
// test relies on does reject a misspelled field.
func TestManifestDecodesStrictly(t *testing.T) {
	manifest, err := os.ReadFile("job.yaml")
	require.NoError(t, err)
	job, err := decodeJob(t, manifest)
	require.NoError(t, err)
	checkJob(t, job, 4, "2026-01-01T00:00:00Z")

	for _, typo := range []struct{ from, to string }{
		{"completionMode:", "completionMod:"},
		{"topologyKey:", "topologykey:"}, // a case the strict decoder alone accepts
		{"parallelism:", "paralelism:"},
		{"secretKeyRef:", "secretRef:"},
	} {
		bad := bytes.Replace(manifest, []byte(typo.from), []byte(typo.to), 1)
		require.NotEqual(t, manifest, bad)
		_, err := decodeJob(t, bad)
		require.ErrorContains(t, err, "unknown field", "%s -> %s", typo.from, typo.to)
	}
}

// shell returns the path of sh, skipping the test without one.
func shell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh: the recipe's scripts need a POSIX shell")
	}
	return sh
}

// TestCreateJobFillsTheManifest: create-job.sh puts the image, the shard
// count and the start instant (given, or a minute ahead) into the
// manifest, which still decodes strictly; bad arguments are refused.
func TestCreateJobFillsTheManifest(t *testing.T) {
	sh := shell(t)
	print := func(t *testing.T, extraEnv []string, args ...string) ([]byte, error) {
		cmd := exec.Command(sh, append([]string{"create-job.sh"}, args...)...)
		cmd.Env = append(os.Environ(), append([]string{"PRINT_ONLY=1"}, extraEnv...)...)
		return cmd.Output()
	}
	out, err := print(t, []string{"ANVIL_START_AT=2027-03-04T05:06:07Z"}, "registry.example.com/team/bench:v2", "3")
	require.NoError(t, err)
	job, err := decodeJob(t, out)
	require.NoError(t, err)
	checkJob(t, job, 3, "2027-03-04T05:06:07Z")
	require.Equal(t, "registry.example.com/team/bench:v2", job.Spec.Template.Spec.Containers[0].Image)

	out, err = print(t, []string{"ANVIL_START_AT="}, "img:1")
	require.NoError(t, err)
	job, err = decodeJob(t, out)
	require.NoError(t, err)
	checkJob(t, job, 4, env(&job.Spec.Template.Spec.Containers[0], "ANVIL_START_AT").Value)

	for _, args := range [][]string{{}, {"img", "0"}, {"img", "x"}, {"img with space"}, {"a", "2", "3"}} {
		_, err := print(t, nil, args...)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%q", args)
		require.Equal(t, 2, ee.ExitCode(), "%q", args)
	}
}

// TestCollectAndMerge runs the recipe end to end without a cluster: the
// Job's own container command (with a stand-in for the benchmark binary
// that leaves a shard artifact in ANVIL_OUT, as a shard run does) writes
// each pod's log; collect.sh, through a stand-in kubectl that serves those
// logs, copies the artifacts out; and they merge.
func TestCollectAndMerge(t *testing.T) {
	sh := shell(t)
	for _, tool := range []string{"tar", "base64", "sed", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	manifest, err := os.ReadFile("job.yaml")
	require.NoError(t, err)
	job, err := decodeJob(t, manifest)
	require.NoError(t, err)
	c := job.Spec.Template.Spec.Containers[0]
	require.Equal(t, []string{"/bin/sh", "-c"}, c.Command)
	script := c.Args[0]
	require.Contains(t, script, "/usr/local/bin/bench.test")

	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	require.NoError(t, os.Mkdir(logs, 0o755))
	const shards = 3
	for i := range shards {
		shard, err := os.ReadFile(filepath.Join("..", "..", "testdata", "shards", "shard-"+strconv.Itoa(i)+".json"))
		require.NoError(t, err)
		// The benchmark stand-in prints what go test prints and writes
		// the shard's artifact where anviltest writes it.
		bench := filepath.Join(dir, "bench-"+strconv.Itoa(i))
		require.NoError(t, os.WriteFile(bench+".json", shard, 0o644))
		stand := fmt.Sprintf(`#!/bin/sh
# Called with the flags the manifest gives the benchmark binary.
[ "$*" = '-test.run ^$ -test.bench ^BenchmarkCapacity$ -test.benchtime=60x' ] || { echo "bench.test $*"; exit 3; }
echo 'BenchmarkCapacity-2 1 24.00 requests'
cp '%s' "$ANVIL_OUT/BenchmarkCapacity.json"
`, bench+".json")
		require.NoError(t, os.WriteFile(bench, []byte(stand), 0o755))
		run := exec.Command(sh, "-c", strings.ReplaceAll(script, "/usr/local/bin/bench.test", bench))
		// The pod's environment: the manifest's literal values, the
		// index the Job controller sets, and a directory for the volume.
		run.Env = os.Environ()
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				run.Env = append(run.Env, e.Name+"="+e.Value)
			}
		}
		run.Env = append(run.Env, "JOB_COMPLETION_INDEX="+strconv.Itoa(i),
			"ANVIL_OUT="+filepath.Join(dir, "pod-"+strconv.Itoa(i), "artifacts"))
		log, err := run.CombinedOutput()
		require.NoError(t, err, "%s", log)
		require.Contains(t, string(log), "BenchmarkCapacity-2 1")
		require.NoError(t, os.WriteFile(filepath.Join(logs, "anvil-bench-"+strconv.Itoa(i)+".log"), log, 0o644))
	}
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	kubectl := `#!/bin/sh
case $1 in
get) echo "pod/anvil-bench-${4##*job-completion-index=}" ;;
logs) cat "$FAKE_LOGS/${2#pod/}.log" ;;
*) exit 1 ;;
esac
`
	require.NoError(t, os.WriteFile(filepath.Join(bin, "kubectl"), []byte(kubectl), 0o755))
	collected := filepath.Join(dir, "collected")
	collect := exec.Command(sh, "collect.sh", "anvil-bench", strconv.Itoa(shards), collected)
	collect.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_LOGS="+logs)
	out, err := collect.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "anvilreport merge -o merged.json "+collected+"/shard-*/*.json")

	paths, err := filepath.Glob(filepath.Join(collected, "shard-*", "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, shards)
	var in []merge.Artifact
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		in = append(in, merge.Artifact{Name: p, Data: data})
	}
	merged, err := merge.Shards(in...)
	require.NoError(t, err)
	require.Equal(t, 24, merged.Completed)

	// A pod whose log lost its artifacts is named.
	require.NoError(t, os.WriteFile(filepath.Join(logs, "anvil-bench-1.log"), []byte("BenchmarkCapacity-2 1\n"), 0o644))
	collect = exec.Command(sh, "collect.sh", "anvil-bench", strconv.Itoa(shards), filepath.Join(dir, "again"))
	collect.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_LOGS="+logs)
	out, err = collect.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "shard 1 (pod/anvil-bench-1): no artifacts in its log")
}
