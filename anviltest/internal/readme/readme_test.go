//go:build unix && !race

// (Not under the race detector: .ci/run runs this package's test once,
// with go test ./...; the commands it runs are no code of this binary.)

// Package readme runs the README's commands as a user pastes them. It
// holds only a test, in a package of its own so that the minutes it
// takes have their own go test budget beside anviltest's.
package readme

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/anvilbench/anvil/capacity/artifact"
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// readmeBlock is one fenced block of the README: its info string ("sh",
// "go"), its first line's number and its text.
type readmeBlock struct {
	lang, code string
	line       int
}

// readmeBlocks returns the fenced blocks of the README at path.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []readmeBlock
	var cur *readmeBlock
	var lines []string
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur, lines = &readmeBlock{lang: strings.TrimPrefix(line, "```"), line: i + 2}, nil
		case cur != nil && line == "```":
			cur.code = strings.Join(lines, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, line)
		}
	}
	require.Nil(t, cur, "an unclosed block")
	return out
}

// The README's placeholders for what a reader has and a test does not:
// the server to point it at and the fake server's port.
const (
	readmeServer   = "http://gpu-box:8000/v1"
	readmeFakeAddr = "127.0.0.1:8000"
)

// TestCommands runs every shell command the README tells a user to
// run, as pasted and in order, in one shell session (so an export carries
// over, as in a terminal), in a copy of this module in a temporary
// directory (so nothing is written into the source tree), the README's
// Go example pasted as the package ./bench its shard recipe builds. The
// only changes: its server, http://gpu-box:8000/v1, is a fake server this
// test starts (serving qwen3-32b, time-scaled), the standalone fake's
// port is a free one, the curl that follows it first waits for it to
// serve (and is bounded by timeout 120), and GOFLAGS adds -trimpath so
// the copy's builds hit the build cache across runs. The second set-up command, go test ./..., is the command
// this test is part of: it is checked to be .ci/run's, not run again.
//
// Each block's outcome is checked: the benchmarks print their lines
// against the embedded fake and against the server, the conformance suite
// passes, anvilreport reads the artifacts beside the conformance verdict
// (issue 31 finding 5), benchstat and compare run, and the shard recipe's
// three shards of the README's own example merge into the workload's
// 600 requests (finding 4).
func TestCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands (minutes)")
	}
	if os.Getenv("ANVIL_BASE_URL") != "" {
		t.Skip("runs against its own servers")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, tool := range []string{"bash", "curl", "date"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the README's commands use %s", tool)
	}
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))

	// The two set-up commands: the first two shell blocks, one command each.
	var sh []readmeBlock
	var example string
	for _, b := range blocks {
		switch {
		case b.lang == "sh":
			sh = append(sh, b)
		case b.lang == "go" && strings.HasPrefix(b.code, "package ") && example == "":
			example = b.code
		}
	}
	require.GreaterOrEqual(t, len(sh), 3)
	require.Equal(t, "go test -bench Capacity -run '^$' ./anviltest", sh[0].code, "README.md:%d: the benchmark command", sh[0].line)
	require.Equal(t, "go test ./...", sh[1].code, "README.md:%d: the test command", sh[1].line)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^[^#\n]*\bgo test \./\.\.\.$`, string(ci), ".ci/run runs the README's test command")
	require.NotEmpty(t, example, "the README shows a whole benchmark file")

	sandbox := t.TempDir()
	copyModule(t, root, sandbox)
	require.NoError(t, os.Mkdir(filepath.Join(sandbox, "bench"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sandbox, "bench", "bench_test.go"), []byte(example+"\n"), 0o644))

	cfg, err := fakeserver.Profile("reasoning")
	require.NoError(t, err)
	cfg.Model, cfg.TimeScale = "qwen3-32b", 0.02
	server := fakeserver.New(cfg)
	defer server.Close()
	fakeAddr := freeAddr(t)

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range sh {
		fmt.Fprintf(&script, "echo '::block %d'\n", i)
		code := strings.ReplaceAll(b.code, readmeServer, server.BaseURL())
		code = strings.ReplaceAll(code, readmeFakeAddr, fakeAddr)
		switch {
		case i == 1:
			code = ": the test command, run by .ci/run"
		case strings.HasPrefix(code, "go run ./fake_server/cmd/fakeserver "):
			// A server: it runs until the test ends (its output in a file,
			// so that it holds no pipe of the session open).
			code += " >fakeserver.log 2>&1 & fakeserver=$!"
		case strings.HasPrefix(code, "curl "):
			// Wait for the server's own "serving" line (go run compiles
			// first); a server that exits fails the session.
			script.WriteString("until grep -q 'fakeserver: serving' fakeserver.log 2>/dev/null; do kill -0 $fakeserver || { cat fakeserver.log; exit 1; }; sleep 1; done\n")
			code = "timeout 120 " + code
		}
		script.WriteString(code + "\n")
	}
	script.WriteString("echo '::end'\n")

	cmd := exec.CommandContext(t.Context(), "bash", "-c", script.String())
	cmd.Dir = sandbox
	cmd.Env = readmeEnv(goTool)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the fake server it left running
	runErr := cmd.Wait()
	outputs := splitBlocks(out.String())
	require.NoError(t, runErr, "the README's commands, as run:\n%s\noutput:\n%s", script.String(), out.String())
	require.Contains(t, outputs, "end", "%s", out.String())

	for i, b := range sh {
		got := outputs[fmt.Sprint(i)]
		where := fmt.Sprintf("README.md:%d: %s\n%s", b.line, b.code, got)
		switch {
		case i == 0:
			require.Contains(t, got, "target: embedded-fake", where)
			require.Regexp(t, `(?m)^BenchmarkCapacityContext/ctx=4096/conc=4-\d+\s+\d+\s+\d+ ns/op.* ttft-p50-ms`, got, where)
		case strings.Contains(b.code, "-bench CapacityConcurrency"):
			require.Contains(t, got, "engine: vllm-0.11.0", where)
			require.Regexp(t, `(?m)^BenchmarkCapacityConcurrency/ctx=32768/conc=16-\d+\s+60\s`, got, where)
		case strings.Contains(b.code, "-run Conformance"):
			require.Contains(t, got, "--- PASS: TestConformance", where)
		case strings.Contains(b.code, "anvilreport html"):
			require.Regexp(t, `conformance\.\S+\.json: skipped: .*not an anvil-serving.benchmark/v1 capacity artifact`, got, where+"\n(the conformance verdict is skipped)")
			info, err := os.Stat(filepath.Join(sandbox, "report.html"))
			require.NoError(t, err, where)
			require.Positive(t, info.Size())
		case strings.Contains(b.code, "benchstat"):
			require.Regexp(t, `(?m)^\s*│\s*old\.txt\s*│`, got, where)
			require.Contains(t, got, "ttft-p50-ms", where)
			require.Contains(t, got, "workload (identical on every run)", where)
		case strings.Contains(b.code, "anvilreport merge"):
			f, err := os.Open(filepath.Join(sandbox, "merged.json"))
			require.NoError(t, err, where)
			rep, err := artifact.Read(f)
			f.Close()
			require.NoError(t, err, where)
			require.Equal(t, 600, rep.Requests, where)
			require.Equal(t, 16, rep.Concurrency, where)
			require.NotNil(t, rep.AnvilGo.Shards, where)
			require.Equal(t, 3, rep.AnvilGo.Shards.Count, where)
		case strings.HasPrefix(b.code, "curl "):
			require.Contains(t, got, "data: [DONE]", where)
		}
	}
}

// splitBlocks cuts the session's output at its "::block N" markers.
func splitBlocks(out string) map[string]string {
	parts := map[string]string{}
	re := regexp.MustCompile(`(?m)^::(block \d+|end)$`)
	locs := re.FindAllStringSubmatchIndex(out, -1)
	for k, loc := range locs {
		end := len(out)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		parts[strings.TrimPrefix(out[loc[2]:loc[3]], "block ")] = out[loc[1]:end]
	}
	return parts
}

// readmeEnv is the session's environment: the developer's without any
// ANVIL_* variable, GOFLAGS with -trimpath (the copy's builds then share
// the build cache with the last run's), the go command first on PATH.
func readmeEnv(goTool string) []string {
	flags := "-trimpath"
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "ANVIL_") || strings.HasPrefix(kv, "JOB_COMPLETION_INDEX="):
		case strings.HasPrefix(kv, "GOFLAGS="):
			flags = strings.TrimPrefix(kv, "GOFLAGS=") + " " + flags
		case strings.HasPrefix(kv, "PATH="):
			env = append(env, "PATH="+filepath.Dir(goTool)+string(os.PathListSeparator)+strings.TrimPrefix(kv, "PATH="))
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS="+flags, "ANVIL_PROGRESS=0")
}

// copyModule copies the module at root into dir: every file but the
// version control's, the artifacts of earlier runs and editors' files.
func copyModule(t *testing.T, root, dir string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		switch {
		case d.Name() == ".git" && d.IsDir(), d.IsDir() && d.Name() == "anvil-out":
			return filepath.SkipDir
		case d.Name() == ".git": // a worktree's pointer to its repository
			return nil
		}
		to := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm())
	})
	require.NoError(t, err)
}

// freeAddr is a loopback address no one listens on, for a moment: a port
// below Linux's ephemeral range (32768 and up), which no other test's
// listener on port 0 is given meanwhile.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(10000))
		if ln, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, ln.Close())
			return addr
		}
	}
	t.Fatal("no free port in 20000..29999")
	return ""
}
