package repo

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDockerfileBuildSteps runs the Dockerfile's steps as a builder would,
// without a Docker engine: each stage gets a directory for its filesystem,
// COPY copies from the build context (less .dockerignore) or an earlier
// stage, RUN runs its command in the stage's WORKDIR with the stage's ENV
// and this machine's Go and Node in place of the base images'. The binary
// of the last stage must be static (the runtime image has no libc) and
// start with the image's ENV.
func TestDockerfileBuildSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole image's steps (about a minute); not in -short")
	}
	for _, tool := range []string{"npm", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("REQUIRE_NODE") != "" {
				t.Fatalf("%s is not installed, and REQUIRE_NODE is set", tool)
			}
			t.Skipf("the Dockerfile's CSS stage needs Node 20 with npm (%s not found): install it and run go test -run TestDockerfileBuildSteps", tool)
		}
	}
	stages := parseDockerfile(t, "Dockerfile")
	ignore := dockerignore(t)
	roots := map[string]string{}
	var last *stage
	for i := range stages {
		s := &stages[i]
		root := t.TempDir()
		roots[s.name] = root
		workdir := "/"
		env := map[string]string{}
		for _, in := range s.steps {
			switch in.op {
			case "WORKDIR":
				workdir = path.Join(workdir, in.args[0])
				mkdir(t, filepath.Join(root, workdir))
			case "ENV":
				for _, kv := range in.args {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
			case "COPY":
				from, srcs, dst := "", in.args[:len(in.args)-1], in.args[len(in.args)-1]
				for len(srcs) > 0 && strings.HasPrefix(srcs[0], "--") {
					if v, ok := strings.CutPrefix(srcs[0], "--from="); ok {
						from = v
					}
					srcs = srcs[1:]
				}
				intoDir := strings.HasSuffix(dst, "/") || len(srcs) > 1
				dst = filepath.Join(root, path.Join(workdir, dst))
				for _, src := range srcs {
					if from == "" {
						copyTree(t, ".", src, dst, intoDir, ignore)
						continue
					}
					fromRoot, ok := roots[from]
					if !ok {
						t.Fatalf("COPY --from=%s: no earlier stage of that name", from)
					}
					copyTree(t, fromRoot, strings.TrimPrefix(src, "/"), dst, intoDir, nil)
				}
			case "RUN":
				cmd := strings.Join(in.args, " ")
				for _, word := range strings.Fields(cmd) {
					if strings.HasPrefix(word, "/") || strings.Contains(word, "=/") {
						t.Fatalf("RUN %s: %q is an absolute path; RUN steps use paths relative to WORKDIR so that they run the same here", cmd, word)
					}
				}
				run := exec.Command("sh", "-c", cmd)
				run.Dir = filepath.Join(root, workdir)
				run.Env = append(os.Environ(), environ(env)...)
				start := time.Now()
				if out, err := run.CombinedOutput(); err != nil {
					t.Fatalf("stage %s: RUN %s: %v\n%s", s.name, cmd, err, out)
				}
				t.Logf("stage %s: RUN %s (%.1fs)", s.name, cmd, time.Since(start).Seconds())
			case "ENTRYPOINT", "USER", "VOLUME", "EXPOSE", "FROM", "LABEL", "HEALTHCHECK":
			default:
				t.Fatalf("%s: an instruction this test cannot run; teach it here", in.op)
			}
		}
		s.env = env
		last = s
	}

	root := roots[last.name]
	if len(last.entrypoint) == 0 {
		t.Fatal("the last stage has no ENTRYPOINT")
	}
	bin := filepath.Join(root, last.entrypoint[0])
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the ENTRYPOINT %s is not a program: %v", last.entrypoint[0], err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is linked dynamically; the runtime image (distroless static) has no libc", last.entrypoint[0])
		}
	}
	f.Close()

	// The image's ENV, with the ledger in the stage's /data and a free
	// loopback port: the program starts and says it is healthy.
	env := maps.Clone(last.env)
	env["ADDR"] = "127.0.0.1:0"
	if p, ok := strings.CutPrefix(env["DATABASE_URL"], "sqlite:/"); ok {
		if _, err := os.Stat(filepath.Join(root, path.Dir("/"+p))); err != nil {
			t.Fatalf("DATABASE_URL %s: its directory is not in the image: %v", env["DATABASE_URL"], err)
		}
		env["DATABASE_URL"] = "sqlite:" + filepath.Join(root, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, last.entrypoint[1:]...)
	cmd.Env = environ(env)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	listening := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	lines := bufio.NewScanner(out)
	addr := ""
	for addr == "" && lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("the image's program did not start")
	}
	go io.Copy(io.Discard, out)
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz of the image's program: %v %v", res, err)
	}
	res.Body.Close()
}

type instruction struct {
	op   string
	args []string
}

type stage struct {
	name       string
	steps      []instruction
	env        map[string]string
	entrypoint []string
}

// parseDockerfile reads the Dockerfile's stages: comments dropped, lines
// joined at a trailing backslash.
func parseDockerfile(t *testing.T, name string) []stage {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var logical string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			logical += l + " "
			continue
		}
		logical += line
		fields := strings.Fields(logical)
		logical = ""
		if len(fields) == 0 {
			continue
		}
		in := instruction{op: strings.ToUpper(fields[0]), args: fields[1:]}
		if in.op == "FROM" {
			s := stage{name: fmt.Sprint(len(stages))}
			if len(in.args) == 3 && strings.EqualFold(in.args[1], "AS") {
				s.name = in.args[2]
			}
			stages = append(stages, s)
		}
		if len(stages) == 0 {
			t.Fatalf("%s before the first FROM", in.op)
		}
		s := &stages[len(stages)-1]
		if in.op == "ENTRYPOINT" {
			if err := json.Unmarshal([]byte(strings.Join(in.args, " ")), &s.entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT is not in exec form (a JSON list): %v", err)
			}
		}
		s.steps = append(s.steps, in)
	}
	if len(stages) == 0 {
		t.Fatal("the Dockerfile has no FROM")
	}
	return stages
}

// dockerignore reads .dockerignore's patterns.
func dockerignore(t *testing.T) []string {
	data, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(".dockerignore: ", err)
	}
	var patterns []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			if strings.HasPrefix(line, "!") {
				t.Fatalf(".dockerignore: exceptions (%s) are beyond this test", line)
			}
			patterns = append(patterns, strings.Trim(line, "/"))
		}
	}
	return patterns
}

// copyTree copies src (a file or a directory, relative to the root from)
// to dst: into it when intoDir, as it otherwise. Paths matching ignore are
// left out.
func copyTree(t *testing.T, from, src, dst string, intoDir bool, ignore []string) {
	t.Helper()
	src = path.Clean(src)
	base := filepath.Join(from, src)
	info, err := os.Stat(base)
	if err != nil {
		t.Fatalf("COPY %s: %v", src, err)
	}
	if intoDir && !info.IsDir() {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if slices.ContainsFunc(ignore, func(pat string) bool {
			ok, _ := path.Match(pat, filepath.ToSlash(rel))
			return ok
		}) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		inner, _ := filepath.Rel(base, p)
		target := filepath.Join(dst, inner)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if fi, err := d.Info(); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, mode)
	})
	if err != nil {
		t.Fatalf("COPY %s: %v", src, err)
	}
}

// environ writes variables as a process's environment.
func environ(vars map[string]string) []string {
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

func mkdir(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
