// Package release tests the release build (hack/release.sh): archives, checksums,
// container image and krew manifest, built twice to prove them reproducible.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const version = "v0.9.0"

func TestReleaseBuild(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the release build reads the commit with git: %v", err)
	}
	platform := "linux/" + runtime.GOARCH
	dists := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dists {
		cmd := exec.Command("bash", "../release.sh", version)
		cmd.Env = append(os.Environ(), "PLATFORMS="+platform, "DIST="+d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release.sh: %v\n%s", err, out)
		}
	}
	archive := fmt.Sprintf("eksdoctor_%s_linux_%s.tar.gz", version, runtime.GOARCH)
	files := []string{archive, "checksums.txt", "eksdoctor_" + version + "_oci.tar", "krew/eksdoctor.yaml"}

	// Reproducible: the two builds are byte for byte the same.
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(dists[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dists[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of the same commit", f)
		}
	}
	dist := dists[0]
	data, err := os.ReadFile(filepath.Join(dist, archive))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, _ := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if want := hex.EncodeToString(sum[:]) + "  " + archive + "\n"; string(sums) != want {
		t.Errorf("checksums.txt = %q, want %q", sums, want)
	}

	// The archive's binary is static and says what it is.
	entries := untar(t, gunzip(t, data))
	if _, ok := entries["README.md"]; !ok || len(entries) != 2 {
		t.Errorf("archive holds %v, want eksdoctor and README.md", keys(entries))
	}
	commit, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	wantVersion := regexp.MustCompile(`^eksdoctor ` + regexp.QuoteMeta(version) + ` \(commit ` + strings.TrimSpace(string(commit)) + `, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, go1\.[0-9.]+, ` + platform + `\)\n$`)
	out := run(t, entries["eksdoctor"], "version")
	if !wantVersion.MatchString(out) {
		t.Errorf("version of the released binary: %q, want %s", out, wantVersion)
	}

	// The container image: an OCI layout whose every blob matches its digest,
	// a manifest for the platform, a config that runs /eksdoctor as a user
	// that is not root, and a layer that holds the same binary.
	image, err := os.ReadFile(filepath.Join(dist, "eksdoctor_"+version+"_oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	layout := untar(t, image)
	if string(layout["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", layout["oci-layout"])
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		b, ok := layout["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		s := sha256.Sum256(b)
		if !ok || "sha256:"+hex.EncodeToString(s[:]) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s (%d bytes) missing or not what its descriptor says", d.Digest, d.Size)
		}
		return b
	}
	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		Manifests     []descriptor `json:"manifests"`
	}
	decode(t, layout["index.json"], &index)
	if index.SchemaVersion != 2 || len(index.Manifests) != 1 || index.Manifests[0].Platform.OS+"/"+index.Manifests[0].Platform.Architecture != platform {
		t.Fatalf("index.json: %s", layout["index.json"])
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	decode(t, blob(index.Manifests[0]), &manifest)
	var config struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			User       string   `json:"User"`
			Entrypoint []string `json:"Entrypoint"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	decode(t, blob(manifest.Config), &config)
	if config.Config.User == "" || strings.HasPrefix(config.Config.User, "0") || strings.Join(config.Config.Entrypoint, " ") != "/eksdoctor" {
		t.Errorf("image config: user %q, entrypoint %q", config.Config.User, config.Config.Entrypoint)
	}
	if len(manifest.Layers) != 1 || len(config.RootFS.DiffIDs) != 1 {
		t.Fatalf("layers %d, diff IDs %d; want one", len(manifest.Layers), len(config.RootFS.DiffIDs))
	}
	rawLayer := gunzip(t, blob(manifest.Layers[0]))
	if d := sha256.Sum256(rawLayer); "sha256:"+hex.EncodeToString(d[:]) != config.RootFS.DiffIDs[0] {
		t.Error("the layer's diff ID is not the digest of its uncompressed tar")
	}
	rootfs := untar(t, rawLayer)
	if !bytes.Equal(rootfs["eksdoctor"], entries["eksdoctor"]) {
		t.Error("the image's binary is not the released one")
	}
	if out := run(t, rootfs["eksdoctor"], "check", "../../examples/broken", "--fail-on", "never"); !strings.Contains(out, "7 errors, 5 warnings, 0 info") {
		t.Errorf("the image's binary on the bundled example:\n%s", out)
	}

	// The krew manifest: what krew validates (name, semantic version with v,
	// short description, platforms each with a selector, an https URI, the
	// archive's SHA-256 and a bin the archive holds).
	raw, err := os.ReadFile(filepath.Join(dist, "krew", "eksdoctor.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var plugin struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version          string `json:"version"`
			Homepage         string `json:"homepage"`
			ShortDescription string `json:"shortDescription"`
			Description      string `json:"description"`
			Caveats          string `json:"caveats"`
			Platforms        []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
				Bin    string `json:"bin"`
				Files  []struct {
					From string `json:"from"`
					To   string `json:"to"`
				} `json:"files"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(raw, &plugin); err != nil {
		t.Fatalf("krew manifest: %v\n%s", err, raw)
	}
	s := plugin.Spec
	if plugin.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || plugin.Kind != "Plugin" || plugin.Metadata.Name != "eksdoctor" ||
		s.Version != version || s.ShortDescription == "" || len(s.ShortDescription) > 50 || !strings.HasPrefix(s.Homepage, "https://") || len(s.Platforms) != 1 {
		t.Errorf("krew manifest header: %+v", plugin)
	}
	for _, p := range s.Platforms {
		if p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"] != platform ||
			p.URI != "https://github.com/eksdoctor/eksdoctor/releases/download/"+version+"/"+archive ||
			p.SHA256 != hex.EncodeToString(sum[:]) || p.Bin != "eksdoctor" {
			t.Errorf("krew platform: %+v", p)
		}
		for _, f := range p.Files {
			if _, ok := entries[f.From]; !ok || f.To != "." {
				t.Errorf("krew file %+v: not in the archive", f)
			}
		}
	}
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
	Platform  struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// untar reads the regular files of a tar.
func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = data
	}
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// run writes a binary out and runs it.
func run(t *testing.T, bin []byte, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eksdoctor")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", path, args, err, out)
	}
	return string(out)
}
