package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// dockerStage is what the final stage of the Dockerfile declares.
type dockerStage struct {
	env, labels     map[string]string
	user, workdir   string
	volumes, ports  []string
	entrypoint, cmd []string
	dataChown       string // --chown of the COPY that makes /data
}

// parseDockerfile reads the directives of the Dockerfile's last stage that
// end up in the image's configuration. It knows the forms the Dockerfile
// uses (one ENV or LABEL pair per line, JSON ENTRYPOINT and CMD) and fails
// on any other, so that an edit cannot slip past the comparison.
func parseDockerfile(t *testing.T, text string) dockerStage {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "FROM ") {
			lines = nil // only the final stage counts
		}
		lines = append(lines, l)
	}
	st := dockerStage{env: map[string]string{}, labels: map[string]string{}}
	unquote := func(s string) string {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s
	}
	for _, l := range lines {
		word, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "FROM":
			if rest != "scratch" {
				t.Errorf("final stage FROM %s, want scratch", rest)
			}
		case "ENV", "LABEL":
			k, v, ok := strings.Cut(rest, "=")
			if !ok || strings.ContainsAny(k, " \"") || (!strings.HasPrefix(v, `"`) && strings.Contains(v, " ")) {
				t.Fatalf("%q: want one %s key=value per line", l, word)
			}
			if word == "ENV" {
				st.env[k] = unquote(v)
			} else {
				st.labels[k] = unquote(v)
			}
		case "USER":
			st.user = rest
		case "WORKDIR":
			st.workdir = rest
		case "VOLUME":
			st.volumes = append(st.volumes, strings.Fields(rest)...)
		case "EXPOSE":
			for _, p := range strings.Fields(rest) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				st.ports = append(st.ports, p)
			}
		case "ENTRYPOINT", "CMD":
			var v []string
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Fatalf("%q: want the JSON form: %v", l, err)
			}
			if word == "ENTRYPOINT" {
				st.entrypoint = v
			} else {
				st.cmd = v
			}
		case "COPY":
			f := strings.Fields(rest)
			if f[len(f)-1] == "/data" {
				for _, a := range f {
					if c, ok := strings.CutPrefix(a, "--chown="); ok {
						st.dataChown = c
					}
				}
			}
		default:
			t.Fatalf("%q: a directive this test does not compare with the image", l)
		}
	}
	return st
}

// ociImage is an OCI image read back from an archive of its layout.
type ociImage struct {
	config struct {
		Architecture, OS string
		Config           struct {
			User         string
			ExposedPorts map[string]struct{}
			Env          []string
			Entrypoint   []string
			Cmd          []string
			Volumes      map[string]struct{}
			WorkingDir   string
			Labels       map[string]string
		} `json:"config"`
	}
	layers [][]byte // uncompressed layer tars
}

// readOCIArchive reads the image tagged tag from an OCI layout archive:
// index.json, the manifest, its config and its layers, each checked
// against its digest by name.
func readOCIArchive(t *testing.T, archive, tag string) ociImage {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[path.Clean(h.Name)] = b
		}
	}
	if !strings.Contains(string(files["oci-layout"]), `"imageLayoutVersion"`) {
		t.Fatalf("no oci-layout file in %s", archive)
	}
	type descriptor struct {
		MediaType   string
		Digest      string
		Annotations map[string]string
	}
	blob := func(d descriptor) []byte {
		hex, ok := strings.CutPrefix(d.Digest, "sha256:")
		b, found := files["blobs/sha256/"+hex]
		if !ok || !found {
			t.Fatalf("blob %s missing", d.Digest)
		}
		return b
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	for _, d := range index.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == tag {
			if err := json.Unmarshal(blob(d), &manifest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if manifest.Config.Digest == "" {
		t.Fatalf("no manifest tagged %s in %s", tag, files["index.json"])
	}
	var img ociImage
	if err := json.Unmarshal(blob(manifest.Config), &img.config); err != nil {
		t.Fatal(err)
	}
	for _, l := range manifest.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Fatalf("layer media type %s", l.MediaType)
		}
		zr, err := gzip.NewReader(bytes.NewReader(blob(l)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		img.layers = append(img.layers, b)
	}
	return img
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestContainerImage builds the image with scripts/image.sh (umoci, no
// Docker daemon), reads its configuration and layer back, and checks them
// against the Dockerfile: the same entrypoint, command, user, environment,
// ports, volume, working directory and labels; a user that is not root;
// a layer holding the static binary, the reference emulator's command
// names as links to it, and /data owned by the user; and the binary taken
// from the layer runs.
func TestContainerImage(t *testing.T) {
	if _, err := exec.LookPath("umoci"); err != nil {
		// scripts/test.sh sets LAZULI_REQUIRE_UMOCI, so that CI never
		// passes without this test.
		if os.Getenv("LAZULI_REQUIRE_UMOCI") != "" {
			t.Fatal("umoci is needed to build the container image (apt-get install umoci)")
		}
		t.Skip("umoci is not installed (apt-get install umoci); scripts/test.sh requires it")
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	want := parseDockerfile(t, string(dockerfile))
	dir := t.TempDir()
	archive := filepath.Join(dir, "lazuli.tar")
	build := exec.Command("bash", "../../scripts/image.sh", archive, "test")
	build.Env = append(os.Environ(), "VERSION=v0.0.0-imagetest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	img := readOCIArchive(t, archive, "test")
	c := img.config.Config

	if img.config.OS != "linux" {
		t.Errorf("os %q", img.config.OS)
	}
	if !slices.Equal(c.Entrypoint, want.entrypoint) || !slices.Equal(c.Cmd, want.cmd) {
		t.Errorf("entrypoint %q cmd %q; the Dockerfile says %q %q", c.Entrypoint, c.Cmd, want.entrypoint, want.cmd)
	}
	if c.User != want.user || c.WorkingDir != want.workdir {
		t.Errorf("user %q workdir %q; the Dockerfile says %q %q", c.User, c.WorkingDir, want.user, want.workdir)
	}
	uid, _, _ := strings.Cut(c.User, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("user %q: want a numeric user other than root", c.User)
	}
	sort.Strings(want.ports)
	if got := sortedKeys(c.ExposedPorts); !slices.Equal(got, want.ports) {
		t.Errorf("exposed ports %q; the Dockerfile says %q", got, want.ports)
	}
	for _, p := range []string{"10000/tcp", "10001/tcp", "10002/tcp", "10003/tcp", "10445/tcp", "10010/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed", p)
		}
	}
	if got := sortedKeys(c.Volumes); !slices.Equal(got, want.volumes) || !slices.Equal(got, []string{"/data"}) {
		t.Errorf("volumes %q; the Dockerfile says %q", got, want.volumes)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	if !maps.Equal(env, want.env) {
		t.Errorf("env %q; the Dockerfile says %q", env, want.env)
	}
	for k, v := range want.labels {
		if c.Labels[k] != v {
			t.Errorf("label %s=%q; the Dockerfile says %q", k, c.Labels[k], v)
		}
	}
	if c.Labels["org.opencontainers.image.version"] != "v0.0.0-imagetest" {
		t.Errorf("version label %q", c.Labels["org.opencontainers.image.version"])
	}
	if want.dataChown != c.User {
		t.Errorf("the Dockerfile's /data belongs to %q, the image runs as %q", want.dataChown, c.User)
	}

	// The layer.
	if len(img.layers) != 1 {
		t.Fatalf("%d layers, want 1", len(img.layers))
	}
	type entry struct {
		h    *tar.Header
		body []byte
	}
	entries := map[string]entry{}
	tr := tar.NewReader(bytes.NewReader(img.layers[0]))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		entries[strings.TrimSuffix(path.Clean(h.Name), "/")] = entry{h, b}
	}
	bin, ok := entries[strings.TrimPrefix(c.Entrypoint[0], "/")]
	if !ok || bin.h.Typeflag != tar.TypeReg || bin.h.Mode&0o111 == 0 || bin.h.Uid != 0 {
		t.Fatalf("the entrypoint %s is not an executable file of root's in the layer", c.Entrypoint[0])
	}
	// The names Testcontainers' modules run resolve through PATH.
	for _, name := range []string{"azurite", "azurite-blob", "azurite-queue", "azurite-table"} {
		e, ok := entries[strings.TrimPrefix(path.Join(env["PATH"], name), "/")]
		if !ok || e.h.Typeflag != tar.TypeSymlink || e.h.Linkname != path.Base(c.Entrypoint[0]) {
			t.Errorf("%s is not a link to the binary on PATH %s", name, env["PATH"])
		}
	}
	data, ok := entries["data"]
	if !ok || data.h.Typeflag != tar.TypeDir || strconv.Itoa(data.h.Uid)+":"+strconv.Itoa(data.h.Gid) != c.User {
		t.Errorf("/data is not a directory of the user %s", c.User)
	}
	for name, e := range entries {
		if !strings.HasPrefix(name, "usr") && name != "data" {
			t.Errorf("unexpected %s in the layer", name)
		}
		if name != "data" && e.h.Uid != 0 {
			t.Errorf("%s belongs to %d, want root", name, e.h.Uid)
		}
	}

	// The binary from the layer is static and runs.
	exe := filepath.Join(dir, "lazuli-from-image")
	if err := os.WriteFile(exe, bin.body, 0o755); err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary is dynamically linked")
		}
	}
	ef.Close()
	out, err := exec.Command(exe, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "lazuli v0.0.0-imagetest") {
		t.Errorf("--version of the binary from the image: %v %q", err, out)
	}
	// And serves, run as the image's command line runs it (the data
	// directory moved to a temporary one).
	args := slices.Clone(c.Cmd)
	args[slices.Index(args, "--location")+1] = filepath.Join(dir, "data")
	args = append(args, "--silent")
	for _, p := range []string{"blobPort", "queuePort", "tablePort", "filePort", "smbPort", "adminPort"} {
		args = append(args, "--"+p, "0")
	}
	cmdEnv := os.Environ()
	for k, v := range env {
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = cmdEnv // the image's variables, PATH aside
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
			for _, a := range m[1:] {
				if a != "" && !strings.HasPrefix(a, "0.0.0.0:") {
					t.Errorf("the image's command line listens on %s, want 0.0.0.0", a)
				}
			}
			wantListening(t, m[1:], "blob", "queue", "table", "file")
			return
		}
	}
	t.Fatal("the binary from the image did not start")
}
